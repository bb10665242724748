// Qwen2 (model_type qwen2): Llama's block with biases on the query, key and value projections but not on the
// output projection; sliding windows on the layers from max_window_layers on where use_sliding_window is set.
#include "common/json_fields.hpp"
#include "model/families/decoder_fields.hpp"
#include "model/families/family.hpp"
#include "model/families/llama_like.hpp"

namespace attnscan {

using namespace config_fields;

void qwen_sliding_layers(ModelConfig& c, const nlohmann::json& j, const std::filesystem::path& file) {
  std::vector<bool> sliding;
  const bool on = field_or<bool>(j, file, "use_sliding_window", false);
  if (!decoder_fields::read_layer_types(j, file, c.num_layers, sliding)) {
    const int64_t from = field_or<int64_t>(j, file, "max_window_layers", c.num_layers);
    for (int64_t l = 0; l < c.num_layers; ++l) sliding.push_back(on && l >= from);
  }
  const int64_t window = field_or<int64_t>(j, file, "sliding_window", 0);
  if (on && window > 0) slide_layers(c, sliding, window);
}

namespace {

ModelConfig read_qwen2(const nlohmann::json& j, const std::filesystem::path& file) {
  ModelConfig c = read_llama_like(j, file);
  for (auto& s : c.layer_specs) s.attention.qkv_bias = true, s.attention.out_bias = false;
  qwen_sliding_layers(c, j, file);
  return c;
}

}  // namespace

const ModelFamily& qwen2_family() {
  static const ModelFamily f = layer_family("qwen2", "Qwen2 and Qwen2.5 (Qwen2ForCausalLM; Llama's block with q, k, v biases)", read_qwen2,
                       {"model."}, {}, llama_tensor_map);
  return f;
}

}  // namespace attnscan
