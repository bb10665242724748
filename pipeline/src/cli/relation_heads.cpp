#include "cli/relation_heads.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "attnscan/error.hpp"
#include "store/layout_file.hpp"
#include "store/offset_baselines.hpp"

namespace attnscan::cli {

namespace {

struct RelationRow {
  std::string detector, relation, direction;
  int64_t words = 0, layer = 0, head = 0, best_offset = 0, offset_correct = 0;
  double accuracy = 0, baseline = 0;
};

// The head with the most correct predictions over the file (ties: the lower layer, then head); scores
// are per-example shares of `baseline` words, so score * words is each example's correct count.
RelationRow best_head(const LayoutReader& reader, const ScoreOutput& so, const std::string& file) {
  const auto& p = reader.params();
  const auto& f = reader.file();
  const std::size_t lh = static_cast<std::size_t>(p.model_layers * p.model_heads), rows = reader.examples();
  const std::string group = "/scores/" + so.key();
  for (const char* attr : {"words", "best_offset", "offset_correct"})
    if (!f.has_attr(group, attr))
      throw Error(file + ": " + group + " has no attribute " + attr + " (Clark's offset baseline, written when a run on "
                  "a dataset with trees finishes, from tokens/dep_head; rerun or re-merge with this attnscan)");
  RelationRow r{so.detector, so.output.substr(0, so.output.rfind('.')), so.output.substr(so.output.rfind('.') + 1)};
  r.words = f.attr_int(group, "words");
  r.best_offset = f.attr_int(group, "best_offset");
  r.offset_correct = f.attr_int(group, "offset_correct");
  std::vector<double> correct(lh, 0.0);
  double words = 0;
  const std::size_t step = 4096;
  for (std::size_t a = 0; a < rows; a += step) {
    const std::size_t b = std::min(rows, a + step);
    const auto values = f.read_rows("scores/" + so.key() + "/values", a, b);
    const auto weight = f.read_rows("scores/" + so.key() + "/baseline", a, b);
    for (std::size_t i = 0; i < weight.size(); ++i) {
      if (!(weight[i] > 0)) continue;
      words += weight[i];
      for (std::size_t k = 0; k < lh; ++k) correct[k] += std::rint(static_cast<double>(values[i * lh + k]) * weight[i]);
    }
  }
  if (static_cast<int64_t>(words) != r.words)
    throw Error(file + ": " + group + ": the baseline column counts " + std::to_string(static_cast<int64_t>(words)) +
                " words, attribute words " + std::to_string(r.words) + " (the file is inconsistent)");
  const std::size_t k = static_cast<std::size_t>(std::max_element(correct.begin(), correct.end()) - correct.begin());
  r.layer = static_cast<int64_t>(k) / p.model_heads;
  r.head = static_cast<int64_t>(k) % p.model_heads;
  r.accuracy = words > 0 ? correct[k] / words : NAN;
  r.baseline = words > 0 ? static_cast<double>(r.offset_correct) / words : NAN;
  return r;
}

}  // namespace

void print_relation_heads(const std::string& file, int64_t min_words, const std::string& format, std::ostream& out) {
  LayoutReader reader(file);
  const auto& p = reader.params();
  std::vector<RelationRow> rows;
  bool any = false;
  for (const auto& so : p.scores) {
    if (!is_dependency_output(so)) continue;
    any = true;
    if (!p.trees)
      throw Error(file + ": has dependency scores but no " + kDepHead + " (gold trees; files written before they were "
                  "stored): rerun on the CoNLL-U dataset");
    RelationRow r = best_head(reader, so, file);
    if (r.words >= min_words) rows.push_back(std::move(r));
  }
  if (!any)
    throw Error(file + ": no dependency scores (/scores/dependency/<relation>.<direction>); run with "
                "detectors: [dependency] on a dataset with trees (dataset.format: conllu)");
  std::stable_sort(rows.begin(), rows.end(), [](const RelationRow& a, const RelationRow& b) {
    return std::tie(b.words, a.detector, a.relation, a.direction) < std::tie(a.words, b.detector, b.relation, b.direction);
  });
  if (format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows)
      j.push_back({{"detector", r.detector}, {"relation", r.relation}, {"direction", r.direction}, {"words", r.words},
                   {"layer", r.layer}, {"head", r.head}, {"accuracy", r.accuracy}, {"best_offset", r.best_offset},
                   {"offset_correct", r.offset_correct}, {"offset_baseline", r.baseline},
                   {"difference", r.accuracy - r.baseline}});
    out << nlohmann::json({{"file", file}, {"indexing", "layer and head are 0-indexed"}, {"min_words", min_words},
                           {"relations", j}})
               .dump(2)
        << "\n";
  } else if (format == "csv") {
    out << "detector,relation,direction,words,layer,head,accuracy,best_offset,offset_baseline,difference\n";
    out << std::setprecision(6);
    for (const auto& r : rows)
      out << r.detector << "," << r.relation << "," << r.direction << "," << r.words << "," << r.layer << "," << r.head
          << "," << r.accuracy << "," << r.best_offset << "," << r.baseline << "," << r.accuracy - r.baseline << "\n";
  } else {
    out << "best head per relation and direction (layer-head, 0-indexed) against Clark et al.'s best fixed-offset "
           "baseline; relations with at least "
        << min_words << " words\n\n";
    out << "relation    direction     words  head   accuracy  offset  baseline  difference\n";
    for (const auto& r : rows)
      out << std::left << std::setw(11) << r.relation << " " << std::setw(12) << r.direction << std::right << " "
          << std::setw(6) << r.words << "  " << std::setw(2) << r.layer << "-" << std::left << std::setw(3) << r.head
          << std::right << std::fixed << std::setprecision(3) << " " << std::setw(9) << r.accuracy << "  " << std::showpos
          << std::setw(6) << r.best_offset << std::noshowpos << "  " << std::setw(8) << r.baseline << "  "
          << std::showpos << std::setw(10) << r.accuracy - r.baseline << std::noshowpos << "\n";
    if (rows.empty()) out << "(no relation has " << min_words << " words; lower --min-words)\n";
  }
}

}  // namespace attnscan::cli
