#pragma once
// What a detector scores (its `map:` in the configuration): a layer's attention, or a map derived
// from it or computed beside it by the encoder.
#include <string>

namespace attnscan {

enum class AttentionMap {
  Weights,       // the attention probabilities alpha_ij (the default)
  Norm,          // alpha_ij * ||f_h(x_j)||, each row normalised to sum 1 (Kobayashi et al. 2020)
  Rollout,       // attention rollout up to the layer (Abnar & Zuidema 2020), the same for every head of it
  ValueZeroing,  // value zeroing of the layer (Mohebbi et al. 2023), the same for every head of it
  Alti,          // ALTI of the layer (Ferrando et al. 2022), the same for every head of it
  AltiRollout,   // ALTI rolled out up to the layer, the same for every head of it
};

// The one list of maps and their names in `map:` (layer maps share the names of their datasets,
// store/layout_file.hpp kLayerMaps).
struct AttentionMapName {
  AttentionMap map;
  const char* name;
};
inline constexpr AttentionMapName kAttentionMaps[] = {
    {AttentionMap::Weights, "weights"},           {AttentionMap::Norm, "norm"},
    {AttentionMap::Rollout, "rollout"},           {AttentionMap::ValueZeroing, "value_zeroing"},
    {AttentionMap::Alti, "alti"},                 {AttentionMap::AltiRollout, "alti_rollout"},
};

// "weights, norm, rollout, value_zeroing, alti or alti_rollout"
inline std::string attention_map_choices() {
  std::string out;
  const std::size_t count = std::size(kAttentionMaps);
  for (std::size_t i = 0; i < count; ++i)
    out += (i == 0 ? "" : i + 1 == count ? " or " : ", ") + std::string(kAttentionMaps[i].name);
  return out;
}

// The encoder's layer maps of one example ([L][n][n] each; null when the run did not compute it).
struct MixingMaps {
  const float* value_zeroing = nullptr;
  const float* alti = nullptr;
  const float* alti_rollout = nullptr;
  const float* get(AttentionMap map) const;  // null for the maps derived from attention
};

AttentionMap parse_attention_map(const std::string& text);  // a name of kAttentionMaps; Error otherwise
const char* attention_map_name(AttentionMap m);

}  // namespace attnscan
