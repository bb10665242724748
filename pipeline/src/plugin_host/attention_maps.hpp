#pragma once
// The maps a detector can score instead of raw attention weights (attnscan/attention_map.hpp).
#include <cstdint>
#include <vector>

#include "plugin_host/attention_map.hpp"
#include "attnscan/detector.hpp"

namespace attnscan {

// [L][H][n][n]: alpha_ij * norms_j of each head, each row divided by its sum (a row whose products
// are all 0 stays 0). attention [L][H][n][n], norms [L][H][n].
std::vector<float> norm_weighted_attention(const float* attention, const float* norms, int64_t layers, int64_t heads,
                                           std::size_t n);

// [L][n][n]: rollout R_l = A'_l R_(l-1), R_0 = A'_0, with A'_l = 0.5 * mean over heads of layer l + 0.5 * I,
// rows normalised to sum 1 (Abnar & Zuidema 2020). Accumulated in double.
std::vector<float> attention_rollout(const float* attention, int64_t layers, int64_t heads, std::size_t n);

// Copies of the examples with `attention` pointing at `map` of each (held in `storage`); Weights
// leaves it as it is. Throws Error when the map needs value norms that an example does not carry.
std::vector<sdk::Example> map_examples(AttentionMap map, const std::vector<sdk::Example>& batch,
                                       std::vector<std::vector<float>>& storage);

}  // namespace attnscan
