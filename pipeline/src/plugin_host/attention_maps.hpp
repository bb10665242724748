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

// [L][n][n]: R_l = M_l R_(l-1), R_0 = M_0, for per-layer maps M [L][n][n] (rows summing to 1 stay
// so). Accumulated in double.
std::vector<float> layer_rollout(const float* maps, int64_t layers, std::size_t n);

// [L][n][n]: attention rollout, layer_rollout of A'_l = 0.5 * mean over heads of layer l + 0.5 * I,
// rows normalised to sum 1 (Abnar & Zuidema 2020).
std::vector<float> attention_rollout(const float* attention, int64_t layers, int64_t heads, std::size_t n);

// Copies of the examples with `attention` pointing at `map` of each (held in `storage`), each head of
// a layer given the layer map where the map is one per layer; Weights leaves it as it is. `mixing`:
// per example (or empty). Throws Error when the map needs what an example does not carry.
std::vector<sdk::Example> map_examples(AttentionMap map, const std::vector<sdk::Example>& batch,
                                       const std::vector<MixingMaps>& mixing, std::vector<std::vector<float>>& storage);

}  // namespace attnscan
