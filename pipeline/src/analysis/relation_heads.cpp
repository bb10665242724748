#include "analysis/relation_heads.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "common/error.hpp"
#include "store/offset_baselines.hpp"
#include "store/layout_file.hpp"

namespace attnscan::analysis {

namespace {

constexpr std::size_t kRowsPerRead = 4096;

// Calls visit(row, words, values of the row's L*H heads) for every example with words of the output;
// scores are per-example shares of `baseline` words, so value * words is the example's correct count.
template <typename Visit>
void for_each_scored_row(const ResultFile& file, const ScoreOutput& so, Visit visit) {
  const auto& f = file.reader().file();
  const std::size_t lh = file.layers_x_heads(), rows = file.examples();
  for (std::size_t a = 0; a < rows; a += kRowsPerRead) {
    const std::size_t b = std::min(rows, a + kRowsPerRead);
    const auto values = f.read_rows(score_values(so.key()), a, b);
    const std::size_t layers = static_cast<std::size_t>(file.params().model_layers);
    const auto words = read_baseline_rows(f, so.key(), a, b, layers);  // the same count on every layer
    for (std::size_t i = 0; i < b - a; ++i)
      if (words[i * layers] > 0) visit(a + i, static_cast<double>(words[i * layers]), values.data() + i * lh);
  }
}

double correct_words(float share, double words) { return std::rint(static_cast<double>(share) * words); }

// The head with the most correct predictions over the file (ties: the lower layer, then head).
RelationHead best_head(const ResultFile& file, const ScoreOutput& so) {
  const auto& p = file.params();
  const auto& f = file.reader().file();
  const std::string group = "/scores/" + so.key(), name = file.path().string();
  for (const char* attr : {"words", "best_offset", "offset_correct"})
    if (!f.has_attr(group, attr))
      throw Error(name + ": " + group + " has no attribute " + attr + " (Clark's offset baseline, written when a run on "
                  "a dataset with trees finishes, from tokens/dep_head; rerun or re-merge with this attnscan)");
  RelationHead r;
  r.detector = so.detector;
  r.relation = dependency_relation(so);
  r.direction = dependency_direction(so);
  r.words = f.attr_int(group, "words");
  r.best_offset = f.attr_int(group, "best_offset");
  r.offset_correct = f.attr_int(group, "offset_correct");
  std::vector<double> correct(file.layers_x_heads(), 0.0);
  double words = 0;
  for_each_scored_row(file, so, [&](std::size_t, double n, const float* values) {
    words += n;
    for (std::size_t k = 0; k < correct.size(); ++k) correct[k] += correct_words(values[k], n);
  });
  if (static_cast<int64_t>(words) != r.words)
    throw Error(name + ": " + group + ": the baseline column counts " + std::to_string(static_cast<int64_t>(words)) +
                " words, attribute words " + std::to_string(r.words) + " (the file is inconsistent)");
  const std::size_t k = static_cast<std::size_t>(std::max_element(correct.begin(), correct.end()) - correct.begin());
  r.layer = static_cast<int64_t>(k) / p.model_heads;
  r.head = static_cast<int64_t>(k) % p.model_heads;
  r.accuracy = words > 0 ? correct[k] / words : NAN;
  r.baseline = words > 0 ? static_cast<double>(r.offset_correct) / words : NAN;
  return r;
}

// The `count` examples with stored attention where head (r.layer, r.head) finds the most gold words
// (ties: the higher share, then the earlier example).
std::vector<ScoredExample> best_examples(const ResultFile& file, const ScoreOutput& so, const RelationHead& r,
                                         std::size_t count) {
  if (count == 0 || file.stored_layer(r.layer) < 0 || file.stored_head(r.head) < 0) return {};
  const std::size_t k = static_cast<std::size_t>(r.layer * file.params().model_heads + r.head);
  struct Candidate {
    double correct, share;
    std::size_t position;
  };
  std::vector<Candidate> found;
  for_each_scored_row(file, so, [&](std::size_t row, double n, const float* values) {
    const double c = correct_words(values[k], n);
    if (c > 0 && file.has_attention()[row]) found.push_back({c, c / n, row});
  });
  std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(b.correct, b.share) < std::tie(a.correct, a.share);
  });
  std::vector<ScoredExample> out;
  for (std::size_t i = 0; i < std::min(count, found.size()); ++i)
    out.push_back({static_cast<float>(found[i].correct), found[i].position});
  return out;
}

}  // namespace

std::vector<RelationHead> relation_heads(const ResultFile& file, int64_t min_words, std::size_t examples) {
  const std::string name = file.path().string();
  std::vector<RelationHead> rows;
  bool any = false;
  for (const auto& so : file.params().scores) {
    if (!is_dependency_output(so)) continue;
    any = true;
    if (!file.params().trees)
      throw Error(name + ": has dependency scores but no " + kDepHead + " (gold trees; files written before they were "
                  "stored): rerun on the CoNLL-U dataset");
    RelationHead r = best_head(file, so);
    if (r.words < min_words) continue;
    r.examples = best_examples(file, so, r, examples);
    rows.push_back(std::move(r));
  }
  if (!any)
    throw Error(name + ": no dependency scores (/scores/dependency/<relation>.<direction>); run with "
                "detectors: [dependency] on a dataset with trees (dataset.format: conllu)");
  std::stable_sort(rows.begin(), rows.end(), [](const RelationHead& a, const RelationHead& b) {
    return std::tie(b.words, a.detector, a.relation, a.direction) < std::tie(a.words, b.detector, b.relation, b.direction);
  });
  return rows;
}

}  // namespace attnscan::analysis
