#pragma once
// The config.json fields decoder families share (Llama and the families written as differences from it,
// GPT-NeoX, Gemma 3): sizes, rotary positions as transformers 4.x (rope_theta + rope_scaling) and 5.x
// (rope_parameters) write them, sliding windows per layer_types. The encoder families: config_fields.hpp.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "model/model_config.hpp"

namespace attnscan::decoder_fields {

// The sizes every decoder config.json gives, under the names its family uses (GPT-2: n_embd, n_layer, ...):
// vocab_size, hidden (and embedding) size, layers, heads, max_position_embeddings; no token types, no
// absolute positions unless the family sets them.
struct SizeFields {
  const char* hidden = "hidden_size";
  const char* layers = "num_hidden_layers";
  const char* heads = "num_attention_heads";
  const char* positions = "max_position_embeddings";
};
void read_sizes(const nlohmann::json& j, const std::filesystem::path& file, ModelConfig& c, const SizeFields& names = {});

// The model-wide fields from the layer specs: the final norm as the layers' norm (before the LM head), its
// eps, the activation (for the summary line) and whether the LM head is the token embeddings.
void summarise(ModelConfig& c, const std::string& activation_name, bool tied_lm_head);

// Rotary positions from a parameter object ({"rope_type": ..., "rope_theta": ..., "factor": ...}) of a
// head of head_dim; `theta` where the object names none. `where` names the field in messages.
RopeSpec read_rope(const nlohmann::json& params, double theta, int64_t head_dim, const std::filesystem::path& file,
                   const std::string& where);

// The rotary parameters of a config without per-layer-type parameters: rope_parameters (5.x), or rope_theta,
// partial_rotary_factor and rope_scaling (4.x); `theta_key` names 4.x's base field (rope_theta, rotary_emb_base).
RopeSpec read_model_rope(const nlohmann::json& j, const std::filesystem::path& file, int64_t head_dim,
                         const char* theta_key = "rope_theta", double partial = 1.0);

// Each layer's kind from layer_types ("full_attention" / "sliding_attention"); false where absent. Throws
// naming the field where it does not list num_hidden_layers known kinds.
bool read_layer_types(const nlohmann::json& j, const std::filesystem::path& file, int64_t layers,
                      std::vector<bool>& sliding);

// The activation a field names (hidden_act, hidden_activation, activation_function).
Activation read_activation(const nlohmann::json& j, const std::filesystem::path& file, const char* key,
                           const std::string& fallback);

// An unsupported setting's message: "FILE: field 'KEY' ... is not supported (WHY)".
[[noreturn]] void refuse(const std::filesystem::path& file, const std::string& key, const std::string& why);

}  // namespace attnscan::decoder_fields
