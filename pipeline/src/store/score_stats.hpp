#pragma once
// Aggregates of per-example detector scores, always recomputed from the per-example data (so a
// merged file gets exact aggregates, never averages of averages).
#include "store/layout_file.hpp"

namespace attnscan {

inline constexpr const char* kCiMethod =
    "normal approximation: mean +- 1.96 * s / sqrt(count), s the sample standard deviation (ddof 1)";

// Statistics of one detector output per (layer, head), flattened [layers * heads].
struct HeadStats {
  std::vector<float> mean, sd, count, ci_low, ci_high, baseline_mean;
};

// From /scores/<key>/values and baseline, over the examples selected by `keep` (all when null).
HeadStats compute_head_stats(const h5::File& file, const std::string& key, std::size_t layers_x_heads,
                             const std::vector<uint8_t>* keep = nullptr);

// Writes /scores/<detector>/<output>/{mean,std,count,ci_low,ci_high,baseline_mean} as [layers, heads]
// over the examples where the score is defined (not NaN).
void write_score_aggregates(h5::File& file, const LayoutParams& params);

}  // namespace attnscan
