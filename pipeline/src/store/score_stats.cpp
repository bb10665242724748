#include "store/score_stats.hpp"
#include "store/layout_file.hpp"

#include <cmath>
#include <limits>

namespace attnscan {

HeadStats compute_head_stats(const h5::File& f, const std::string& key, std::size_t lh, const std::vector<uint8_t>* keep) {
  constexpr std::size_t kRows = 2048;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::string base = score_group(key) + "/";
  const auto dims = f.dims(base + "values");  // [N, L, H]
  const std::size_t n = static_cast<std::size_t>(dims[0]), layers = static_cast<std::size_t>(dims[1]),
                    heads = lh / layers;
  std::vector<double> count(lh), sum(lh), sumsq(lh), baseline(lh);
  for (std::size_t r = 0; r < n; r += kRows) {
    const std::size_t end = std::min(n, r + kRows);
    auto v = f.read_rows(base + "values", r, end);
    auto b = read_baseline_rows(f, key, r, end, layers);
    for (std::size_t i = 0; i < end - r; ++i) {
      if (keep && !(*keep)[r + i]) continue;
      for (std::size_t k = 0; k < lh; ++k) {
        const double x = v[i * lh + k];
        if (std::isnan(x)) continue;
        count[k] += 1;
        sum[k] += x;
        sumsq[k] += x * x;
        baseline[k] += b[i * layers + k / heads];
      }
    }
  }
  HeadStats h{std::vector<float>(lh, nan), std::vector<float>(lh, nan), std::vector<float>(lh),
              std::vector<float>(lh, nan), std::vector<float>(lh, nan), std::vector<float>(lh, nan)};
  for (std::size_t k = 0; k < lh; ++k) {
    h.count[k] = static_cast<float>(count[k]);
    if (count[k] == 0) continue;
    const double m = sum[k] / count[k];
    h.mean[k] = static_cast<float>(m);
    h.baseline_mean[k] = static_cast<float>(baseline[k] / count[k]);
    if (count[k] < 2) continue;
    const double s = std::sqrt(std::max(0.0, (sumsq[k] - count[k] * m * m) / (count[k] - 1)));
    const double half = 1.96 * s / std::sqrt(count[k]);
    h.sd[k] = static_cast<float>(s);
    h.ci_low[k] = static_cast<float>(m - half);
    h.ci_high[k] = static_cast<float>(m + half);
  }
  return h;
}

void write_score_aggregates(h5::File& f, const LayoutParams& p) {
  const std::size_t lh = static_cast<std::size_t>(p.model_layers * p.model_heads);
  const std::vector<uint64_t> shape = {static_cast<uint64_t>(p.model_layers), static_cast<uint64_t>(p.model_heads)};
  for (const auto& so : p.scores) {
    const std::string base = score_group(so.key()) + "/";
    HeadStats h = compute_head_stats(f, so.key(), lh);
    f.write_array(base + "mean", shape, h.mean);
    f.write_array(base + "std", shape, h.sd);
    f.write_array(base + "count", shape, h.count);
    f.write_array(base + "ci_low", shape, h.ci_low);
    f.write_array(base + "ci_high", shape, h.ci_high);
    f.write_array(base + "baseline_mean", shape, h.baseline_mean);
    f.set_attr("/" + base.substr(0, base.size() - 1), "ci_method", std::string(kCiMethod));
  }
}

}  // namespace attnscan
