#pragma once
// What a detector scores (its `map:` in the configuration), derived from a layer's attention.
#include <string>

namespace attnscan {

enum class AttentionMap {
  Weights,  // the attention probabilities alpha_ij (the default)
  Norm,     // alpha_ij * ||f_h(x_j)||, each row normalised to sum 1 (Kobayashi et al. 2020)
  Rollout,  // attention rollout up to the layer (Abnar & Zuidema 2020), the same for every head of it
};

AttentionMap parse_attention_map(const std::string& text);  // "weights" | "norm" | "rollout"; Error otherwise
const char* attention_map_name(AttentionMap m);

}  // namespace attnscan
