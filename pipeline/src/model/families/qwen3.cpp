// Qwen3 (model_type qwen3): Llama's block with an RMS norm over each head's query and key before the rotation,
// and head_dim its own field (not hidden_size / heads).
#include "model/families/family.hpp"
#include "model/families/llama_like.hpp"

namespace attnscan {

namespace {

ModelConfig read_qwen3(const nlohmann::json& j, const std::filesystem::path& file) {
  ModelConfig c = read_llama_like(j, file);
  for (auto& s : c.layer_specs) s.attention.qk_norm = true;
  qwen_sliding_layers(c, j, file);
  return c;
}

}  // namespace

const ModelFamily& qwen3_family() {
  static const ModelFamily f = layer_family("qwen3", "Qwen3 (Qwen3ForCausalLM; Llama's block with per-head query and key norms)", read_qwen3,
                       {"model."}, {}, llama_tensor_map);
  return f;
}

}  // namespace attnscan
