// Mistral (model_type mistral): Llama's block with every layer attending within a sliding window of
// sliding_window keys (none where it is null).
#include "common/json_fields.hpp"
#include "model/families/decoder_fields.hpp"
#include "model/families/family.hpp"
#include "model/families/llama_like.hpp"

namespace attnscan {

namespace {

ModelConfig read_mistral(const nlohmann::json& j, const std::filesystem::path& file) {
  ModelConfig c = read_llama_like(j, file);
  const int64_t window = config_fields::field_or<int64_t>(j, file, "sliding_window", 0);
  if (window < 0) decoder_fields::refuse(file, "sliding_window", "must be positive or null");
  std::vector<bool> sliding;
  if (!decoder_fields::read_layer_types(j, file, c.num_layers, sliding))
    sliding.assign(static_cast<std::size_t>(c.num_layers), window > 0);
  if (window > 0) slide_layers(c, sliding, window);
  return c;
}

}  // namespace

const ModelFamily& mistral_family() {
  static const ModelFamily f = layer_family("mistral", "Mistral (MistralForCausalLM; Llama's block with a sliding window)", read_mistral,
                       {"model."}, {}, llama_tensor_map);
  return f;
}

}  // namespace attnscan
