#include "analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

#include "analysis/label_groups.hpp"
#include "common/error.hpp"
#include "common/for_each_index.hpp"
#include "store/layout_file.hpp"

namespace attnscan::analysis {

namespace {

// Per-example scores of one output, [examples][model layers][model heads], as doubles.
std::vector<double> scores(const ResultFile& f, const ScoreOutput& so) {
  const std::vector<float> v = f.reader().file().read_rows(score_values(so.key()), 0, f.examples());
  return std::vector<double>(v.begin(), v.end());
}

// The column of one head: values[i][layer][head] for every example i.
std::vector<double> head_column(const std::vector<double>& values, std::size_t examples, int64_t heads, int64_t layer,
                                int64_t head, int64_t layers_x_heads) {
  std::vector<double> c(examples);
  for (std::size_t i = 0; i < examples; ++i)
    c[i] = values[i * static_cast<std::size_t>(layers_x_heads) + static_cast<std::size_t>(layer * heads + head)];
  return c;
}

// test(layer, head) for every head of one output, on o.threads threads (0: every core), appended to rows
// in head order. Each test draws from its own seed, so the results do not depend on the threads.
template <typename Test>
void test_heads(int64_t layers, int64_t heads, const CompareOptions& o, std::vector<CompareRow>& rows, Test test) {
  const auto count = static_cast<std::size_t>(layers * heads);
  std::vector<CompareRow> out(count);
  for_each_index(static_cast<int64_t>(count), o.threads,
                 [&](int64_t k) { out[static_cast<std::size_t>(k)] = test(k / heads, k % heads); });
  rows.insert(rows.end(), std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
}

void finish(Comparison& c) {
  std::vector<double> p;
  for (const auto& r : c.rows) p.push_back(r.test.p);
  const auto q = stats::benjamini_hochberg(p);
  for (std::size_t i = 0; i < c.rows.size(); ++i) c.rows[i].q = q[i];
  auto size = [](const CompareRow& r) {  // effect size; undefined ones last
    const double s = std::isnan(r.test.standardized) ? r.test.effect : r.test.standardized;
    return std::isnan(s) ? -1.0 : std::fabs(s);
  };
  std::stable_sort(c.rows.begin(), c.rows.end(), [&](const CompareRow& x, const CompareRow& y) { return size(x) > size(y); });
}

std::string resampling_text(const CompareOptions& o, const char* what) {
  return std::string(what) + (*what ? " " : "") + "with " + std::to_string(o.resamples) + " resamples, seed " +
         std::to_string(o.seed);
}

// The permutation p's clause of the method: its resampling and, where on, its sequential stopping.
std::string permutation_text(const CompareOptions& o, const char* what) {
  if (o.resamples <= 0) return "";
  char above[32];
  std::snprintf(above, sizeof above, "%g", o.stop_above);
  return std::string("; ") + what + " " + resampling_text(o, "") +
         (o.stop_above > 0 ? std::string(", each stopped once its p is certain to exceed ") + above +
                                 " (Besag-Clifford: p = as extreme / resamples drawn)"
                           : std::string());
}

}  // namespace

Comparison compare_files(const ResultFile& a, const ResultFile& b, const CompareOptions& o) {
  const std::string an = a.path().string(), bn = b.path().string();
  if (a.root().identity.dataset_sha256 != b.root().identity.dataset_sha256)
    throw Error(an + " and " + bn + " come from different datasets (sha256 " + a.root().identity.dataset_sha256.substr(0, 12) +
                "... and " + b.root().identity.dataset_sha256.substr(0, 12) + "...): a paired comparison needs the same examples");
  const auto ia = a.reader().file().read<uint64_t>("examples/index", 0, a.examples());
  const auto ib = b.reader().file().read<uint64_t>("examples/index", 0, b.examples());
  if (ia != ib) {
    std::size_t k = 0;
    while (k < ia.size() && k < ib.size() && ia[k] == ib[k]) ++k;
    throw Error(an + " and " + bn + " hold different examples (" + std::to_string(ia.size()) + " and " +
                std::to_string(ib.size()) + "; the first difference at position " + std::to_string(k) +
                "): compare runs of the whole dataset with the same max_rows and bad-row policy");
  }
  const auto& pa = a.params();
  const auto& pb = b.params();
  const int64_t layers = std::min(pa.model_layers, pb.model_layers), heads = std::min(pa.model_heads, pb.model_heads);
  Comparison c;
  c.kind = "paired";
  c.a = an;
  c.b = bn;
  if (pa.model_layers != pb.model_layers || pa.model_heads != pb.model_heads)
    c.heads_note = "comparing the heads both files have: layers 0-" + std::to_string(layers - 1) + " x heads 0-" +
                   std::to_string(heads - 1) + " (A has " + std::to_string(pa.model_layers) + " x " +
                   std::to_string(pa.model_heads) + ", B " + std::to_string(pb.model_layers) + " x " +
                   std::to_string(pb.model_heads) + ")";
  c.method = "paired t-test over examples where both define the score; 95% CI " +
             (o.ci == "bootstrap" ? resampling_text(o, "percentile bootstrap of the mean difference") : std::string("t-based")) +
             permutation_text(o, "sign-flip permutation p") +
             "; Cohen's d_z; Benjamini-Hochberg q over all tests";
  std::set<std::string> in_b;
  for (const auto& so : pb.scores) in_b.insert(so.key());
  uint64_t first_test = 0;  // test k of the comparison draws from seed + k
  for (const auto& so : pa.scores) {
    if (!in_b.count(so.key())) continue;
    const auto va = scores(a, so), vb = scores(b, so);
    test_heads(layers, heads, o, c.rows, [&](int64_t l, int64_t h) {
      const uint64_t test = first_test + static_cast<uint64_t>(l * heads + h);
      const auto x = head_column(va, a.examples(), pa.model_heads, l, h, pa.model_layers * pa.model_heads);
      const auto y = head_column(vb, b.examples(), pb.model_heads, l, h, pb.model_layers * pb.model_heads);
      CompareRow row{so.detector, so.output, l, h, stats::paired_test(x, y, {o.resamples, o.seed + test, o.stop_above}), NAN};
      if (o.ci == "bootstrap") {
        std::vector<double> d(x.size());
        for (std::size_t i = 0; i < d.size(); ++i) d[i] = x[i] - y[i];
        std::tie(row.test.ci_low, row.test.ci_high) = stats::bootstrap_mean_ci(d, o.resamples, o.seed + test);
      }
      return row;
    });
    first_test += static_cast<uint64_t>(layers * heads);
  }
  if (c.rows.empty()) throw Error(an + " and " + bn + " have no detector output in common");
  finish(c);
  return c;
}

Comparison compare_label_groups(const ResultFile& f, const CompareOptions& o) {
  const auto& p = f.params();
  const auto& file = f.reader().file();
  Comparison c;
  const auto has = file.read<uint8_t>("examples/has_label", 0, f.examples());
  if (std::find(has.begin(), has.end(), 1) == has.end())
    throw Error(f.path().string() + ": the file has no labels (set dataset.label in the run)");
  const bool continuous = has_continuous_labels(file, f.examples());
  std::vector<uint8_t> mask_a, mask_b;
  if (continuous) {
    c.kind = "correlation";
    c.a = "score";
    c.b = "label";
    c.method = "Spearman's rho of the per-example score and the numeric label (ties: average ranks); 95% CI by Fisher's z; "
               "p from t with n-2 df; Benjamini-Hochberg q over all tests";
  } else {
    auto groups = label_groups(file, f.examples(), 0);
    if (groups.size() < 2)
      throw Error(f.path().string() + ": the label has " + std::to_string(groups.size()) + " group(s); a comparison needs two");
    const auto [ga, gb] = choose_two_groups(groups, o.groups, f.path().string());
    c.kind = "groups";
    c.a = groups[ga].name;
    c.b = groups[gb].name;
    mask_a = groups[ga].mask;
    mask_b = groups[gb].mask;
    c.method = "Welch's t-test of label " + c.a + " vs " + c.b + "; 95% CI " +
               (o.ci == "bootstrap" ? resampling_text(o, "percentile bootstrap of the difference of means")
                                    : std::string("Welch t-based")) +
               permutation_text(o, "label permutation p") +
               "; Hedges' g; Benjamini-Hochberg q over all tests";
  }
  const auto labels = file.read<double>("examples/label_value", 0, f.examples());
  uint64_t first_test = 0;  // test k of the comparison draws from seed + k
  for (const auto& so : p.scores) {
    const auto values = scores(f, so);
    test_heads(p.model_layers, p.model_heads, o, c.rows, [&](int64_t l, int64_t h) {
      const uint64_t test = first_test + static_cast<uint64_t>(l * p.model_heads + h);
      const auto column = head_column(values, f.examples(), p.model_heads, l, h, p.model_layers * p.model_heads);
      CompareRow row{so.detector, so.output, l, h, {}, NAN};
      if (continuous) {
        row.test = stats::spearman_test(column, labels);
      } else {
        std::vector<double> a, b;
        for (std::size_t i = 0; i < column.size(); ++i) {
          if (mask_a[i]) a.push_back(column[i]);
          if (mask_b[i]) b.push_back(column[i]);
        }
        row.test = stats::welch_test(a, b, {o.resamples, o.seed + test, o.stop_above});
        if (o.ci == "bootstrap") {
          std::tie(row.test.ci_low, row.test.ci_high) = stats::bootstrap_difference_ci(a, b, o.resamples, o.seed + test);
        }
      }
      return row;
    });
    first_test += static_cast<uint64_t>(p.model_layers * p.model_heads);
  }
  finish(c);
  return c;
}

}  // namespace attnscan::analysis
