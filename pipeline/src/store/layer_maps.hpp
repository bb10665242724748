#pragma once
// The maps a run can store for every example beside its attention, one per model layer.
#include <string_view>

namespace attnscan {

// The maps stored for every example as [model layer][n][n] float32, rows (the receiving token)
// summing to 1, one dataset each: the one list of them (name as in `map:`, dataset, what stores it).
struct LayerMapDataset {
  const char* name;
  const char* dataset;
  const char* option;
  const char* what;
};
inline constexpr LayerMapDataset kLayerMaps[] = {
    {"rollout", "rollout/values", "output.rollout", "attention rollout (Abnar & Zuidema 2020)"},
    {"value_zeroing", "value_zeroing/values", "output.value_zeroing", "value zeroing (Mohebbi et al. 2023)"},
    {"alti", "alti/values", "output.alti", "ALTI of each layer (Ferrando et al. 2022)"},
    {"alti_rollout", "alti_rollout/values", "output.alti", "ALTI across layers: the rollout of alti/values"},
};
// The entry named `name`; nullptr when there is none.
inline const LayerMapDataset* find_layer_map(std::string_view name) {
  for (const auto& m : kLayerMaps)
    if (name == m.name) return &m;
  return nullptr;
}

}  // namespace attnscan
