#include "model/families/config_fields.hpp"

namespace attnscan::config_fields {

void set_activation(ModelConfig& c, const std::string& name, const std::filesystem::path& file, const char* key) {
  c.activation_name = name;
  if (!activation_named(name, c.activation) || c.activation == Activation::Silu)
    throw ModelError(file.string() + ": unsupported " + key + " '" + name +
                     "' (supported: gelu, gelu_python, gelu_new, gelu_pytorch_tanh, relu)");
}

void read_bert_like(const nlohmann::json& j, const std::filesystem::path& file, ModelConfig& c) {
  c.vocab_size = positive(j, file, "vocab_size");
  c.hidden_size = positive(j, file, "hidden_size");
  c.num_layers = positive(j, file, "num_hidden_layers");
  c.num_heads = positive(j, file, "num_attention_heads");
  c.intermediate_size = positive(j, file, "intermediate_size");
  c.max_position_embeddings = positive(j, file, "max_position_embeddings");
  c.layer_norm_eps = field_or<double>(j, file, "layer_norm_eps", 1e-12);
  if (!(c.layer_norm_eps > 0)) throw ModelError(file.string() + ": field 'layer_norm_eps' must be positive");
  if (c.hidden_size % c.num_heads != 0)
    throw ModelError(file.string() + ": hidden_size " + std::to_string(c.hidden_size) +
                     " is not a multiple of num_attention_heads " + std::to_string(c.num_heads));
  set_activation(c, field_or<std::string>(j, file, "hidden_act", "gelu"), file, "hidden_act");
  c.embedding_size = c.hidden_size;
}

void read_positions_after_padding(const nlohmann::json& j, const std::filesystem::path& file, ModelConfig& c) {
  c.position_offset = field_or<int64_t>(j, file, "pad_token_id", 1) + 1;
  if (c.max_tokens() <= 0)
    throw ModelError(file.string() + ": max_position_embeddings " + std::to_string(c.max_position_embeddings) +
                     " leaves no positions after pad_token_id + 1");
}

void read_bert_embeddings(const nlohmann::json& j, const std::filesystem::path& file, ModelConfig& c) {
  c.type_vocab_size = positive(j, file, "type_vocab_size");
  auto pos_type = field_or<std::string>(j, file, "position_embedding_type", "absolute");
  if (pos_type != "absolute")
    throw ModelError(file.string() + ": unsupported position_embedding_type '" + pos_type + "' (supported: absolute)");
}

}  // namespace attnscan::config_fields
