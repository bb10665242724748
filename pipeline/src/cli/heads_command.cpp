// `attnscan heads RESULT.h5`: per detector output, the heads with the highest mean score.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "cli/commands.hpp"
#include "cli/positional.hpp"
#include "cli/heads_relations.hpp"
#include "analysis/head_ranking.hpp"
#include "analysis/label_groups.hpp"
#include "analysis/statistics.hpp"
#include "store/layout_file.hpp"
#include "store/score_stats.hpp"

namespace po = boost::program_options;

namespace attnscan::cli {

namespace {

struct Row {
  std::string detector, output, group;
  int rank;
  int64_t layer, head;
  float mean, ci_low, ci_high, count, baseline, lift;
  std::vector<float> importance;  // the head's mean importance in the group, per importance output
};

// The file's head importance outputs (importance.* of the run: scores/importance/<output>).
std::vector<std::string> importance_outputs_of(const LayoutParams& p) {
  std::vector<std::string> out;
  for (const auto& so : p.scores)
    if (so.detector == "importance") out.push_back(so.output);
  return out;
}

}  // namespace

int heads_command(const std::vector<std::string>& args) {
  std::string file, by, format = "table", only;
  int top = 5, bins = 0, resamples = 2000;
  uint64_t seed = 1;
  std::string ci = "normal";
  bool relations = false;
  int64_t min_words = 20;
  po::options_description opts("attnscan heads RESULT.h5: top heads per detector output");
  opts.add_options()("help,h", "show this help")("top,k", po::value(&top)->default_value(5), "heads per output")(
      "by", po::value(&by), "stratify by: label")("format", po::value(&format)->default_value("table"),
                                                  "table, csv or json")(
      "detector", po::value(&only), "only this detector")(
      "bins", po::value(&bins)->default_value(0), "with --by label on a numeric label: K equal-width bins")(
      "ci", po::value(&ci)->default_value("normal"), "normal (mean +- 1.96 s/sqrt(n)) or bootstrap (percentile)")(
      "resamples", po::value(&resamples)->default_value(2000), "bootstrap draws with --ci bootstrap")(
      "seed", po::value(&seed)->default_value(1), "seed of the bootstrap")(
      "relations", po::bool_switch(&relations),
      "dependency detector: the best head per relation and direction against Clark's best fixed-offset baseline")(
      "min-words", po::value(&min_words)->default_value(20), "with --relations: only relations with at least N words");
  std::vector<std::string> files;
  const auto vm = parse_with_files(args, opts, files, 1);
  if (!files.empty()) file = files[0];
  if (vm.count("help")) {
    std::cout << opts << "\nLayers and heads are 0-indexed. CI: " << kCiMethod
              << ". lift = mean / mean uniform-attention baseline over the same examples.\n";
    return 0;
  }
  if (file.empty())
    throw Error("usage: attnscan heads RESULT.h5 [--top K] [--by label] [--format table|csv|json]\n"
                "       attnscan heads RESULT.h5 --relations [--min-words N] [--format table|csv|json]");
  if (format != "table" && format != "csv" && format != "json") throw Error("--format " + format + ": expected table, csv or json");
  if (relations) {
    if (!by.empty() || !only.empty() || !vm["top"].defaulted())
      throw Error("--relations lists one head per relation; it does not take --top, --by or --detector");
    if (min_words < 0) throw Error("--min-words " + std::to_string(min_words) + ": expected 0 or more");
    print_relation_heads(file, min_words, format, std::cout);
    return 0;
  }
  if (!by.empty() && by != "label") throw Error("--by " + by + ": only 'label' is supported");
  if (bins < 0 || (bins > 0 && by.empty())) throw Error("--bins K: K >= 1, and only with --by label");
  if (ci != "normal" && ci != "bootstrap") throw Error("--ci " + ci + ": expected normal or bootstrap");
  if (ci == "bootstrap" && resamples < 100) throw Error("--resamples " + std::to_string(resamples) + ": use at least 100");
  const std::string ci_method = ci == "normal" ? std::string(kCiMethod)
                                               : "percentile bootstrap over examples, " + std::to_string(resamples) +
                                                     " resamples, seed " + std::to_string(seed);
  if (format != "table" && format != "csv" && format != "json") throw Error("--format " + format + ": expected table, csv or json");
  LayoutReader reader(file);
  const auto& p = reader.params();
  if (p.scores.empty()) throw Error(file + ": no detector scores (run with detectors: in the config)");
  const std::size_t lh = static_cast<std::size_t>(p.model_layers * p.model_heads);

  // Groups of examples: everything, or one per label value.
  std::vector<LabelGroup> groups;
  if (by.empty()) groups.push_back({"all", {}, reader.examples()});
  else groups = label_groups(reader.file(), reader.examples(), bins);
  // Beside each pattern head: its mean importance over the same examples.
  const std::vector<std::string> importance = importance_outputs_of(p);
  std::vector<std::vector<HeadStats>> importance_stats(importance.size());  // [output][group]
  for (std::size_t o = 0; o < importance.size(); ++o)
    for (const auto& g : groups)
      importance_stats[o].push_back(compute_head_stats(reader.file(), "importance/" + importance[o], lh,
                                                       g.mask.empty() ? nullptr : &g.mask));
  std::vector<Row> rows;
  for (const auto& so : p.scores) {
    if (!only.empty() && so.detector != only) continue;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const auto& [group, mask, size] = groups[gi];
      HeadStats s = compute_head_stats(reader.file(), so.key(), lh, mask.empty() ? nullptr : &mask);
      const std::vector<std::size_t> order = rank_heads(s.mean);
      std::vector<float> values;  // per-example scores, read only for a bootstrap
      if (ci == "bootstrap") values = reader.file().read_rows(score_values(so.key()), 0, reader.examples());
      for (int r = 0; r < top && r < static_cast<int>(lh); ++r) {
        const std::size_t k = order[static_cast<std::size_t>(r)];
        float lo = s.ci_low[k], hi = s.ci_high[k];
        if (ci == "bootstrap") {
          std::vector<double> column;
          for (std::size_t i = 0; i < reader.examples(); ++i)
            if (mask.empty() || mask[i]) column.push_back(values[i * lh + k]);
          const auto [blo, bhi] = stats::bootstrap_mean_ci(column, resamples, seed + k);
          lo = static_cast<float>(blo), hi = static_cast<float>(bhi);
        }
        std::vector<float> head_importance;
        for (const auto& per_group : importance_stats) head_importance.push_back(per_group[gi].mean[k]);
        const float lift = s.baseline_mean[k] != 0 ? s.mean[k] / s.baseline_mean[k] : NAN;  // importance: baseline 0
        rows.push_back({so.detector, so.output, group, r + 1, static_cast<int64_t>(k) / p.model_heads,
                        static_cast<int64_t>(k) % p.model_heads, s.mean[k], lo, hi, s.count[k], s.baseline_mean[k],
                        lift, head_importance});
      }
    }
  }
  if (format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows) {
      j.push_back({{"detector", r.detector}, {"output", r.output}, {"group", r.group}, {"rank", r.rank},
                   {"layer", r.layer}, {"head", r.head}, {"mean", r.mean}, {"ci_low", r.ci_low}, {"ci_high", r.ci_high},
                   {"count", r.count}, {"baseline", r.baseline}, {"lift", r.lift}});
      for (std::size_t o = 0; o < importance.size(); ++o) j.back()["importance"][importance[o]] = r.importance[o];
    }
    std::cout << nlohmann::json({{"file", file}, {"indexing", "layer and head are 0-indexed"}, {"ci_method", ci_method},
                                 {"heads", j}})
                     .dump(2)
              << "\n";
  } else if (format == "csv") {
    std::cout << "detector,output,group,rank,layer,head,mean,ci_low,ci_high,count,baseline,lift";
    for (const auto& o : importance) std::cout << ",importance_" << o;
    std::cout << ",ci_method\n";
    for (const auto& r : rows) {
      std::cout << r.detector << "," << r.output << "," << r.group << "," << r.rank << "," << r.layer << "," << r.head
                << "," << r.mean << "," << r.ci_low << "," << r.ci_high << "," << r.count << "," << r.baseline << ","
                << r.lift;
      for (auto v : r.importance) std::cout << "," << v;
      std::cout << ",\"" << ci_method << "\"\n";
    }
  } else {
    std::cout << "top " << top << " heads per detector output (layer-head, 0-indexed); 95% CI: " << ci_method << "\n";
    if (!importance.empty())
      std::cout << "each head's mean importance over the same examples beside it (docs/analyses.md, \"Does the head "
                   "matter?\")\n";
    std::string last;
    bool rows_undefined = false;
    for (const auto& r : rows) {
      const std::string title = r.detector + "/" + r.output + (by.empty() ? "" : "  [" + by + " = " + r.group + "]");
      if (title == last && rows_undefined) continue;
      if (title != last) {
        last = title;
        // Ranked first with no score: no head has one (next_token on a causal model is NaN by design).
        rows_undefined = r.count == 0;
        if (rows_undefined) {
          std::cout << "\n" << title << "\n  undefined: no head has a score on any example (every score NaN; next_token "
                    << "on a causal model, whose queries never see the next token, by design)\n";
          continue;
        }
        std::cout << "\n" << title << "\n  rank  head    mean    95% CI              n      baseline  lift";
        for (const auto& o : importance) std::cout << "  " << std::setw(9) << o;
        std::cout << "\n";
      }
      std::cout << std::fixed << std::setprecision(4) << "  " << std::setw(4) << r.rank << "  " << std::setw(2) << r.layer
                << "-" << std::left << std::setw(3) << r.head << std::right << " " << std::setw(7) << r.mean << "  ["
                << std::setw(7) << r.ci_low << ", " << std::setw(7) << r.ci_high << "]  " << std::setw(6)
                << static_cast<long>(r.count) << "  " << std::setw(8) << r.baseline << "  " << std::setprecision(2)
                << std::setw(5) << r.lift;
      for (auto v : r.importance) std::cout << "  " << std::setprecision(5) << std::setw(9) << v;
      std::cout << "\n";
    }
  }
  return 0;
}

}  // namespace attnscan::cli
