#pragma once
// Typed reads of config.json fields for the model-family loaders: a missing or ill-typed field is a
// ModelError naming the file and the field.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "attnscan/error.hpp"
#include "attnscan/model_config.hpp"

namespace attnscan::config_fields {

template <typename T>
T field(const nlohmann::json& j, const std::filesystem::path& file, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) throw ModelError(file.string() + ": missing field '" + key + "'");
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw ModelError(file.string() + ": field '" + key + "' has the wrong type (" + it->type_name() + ")");
  }
}

template <typename T>
T field_or(const nlohmann::json& j, const std::filesystem::path& file, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return field<T>(j, file, key);
}

inline int64_t positive(const nlohmann::json& j, const std::filesystem::path& file, const char* key) {
  auto v = field<int64_t>(j, file, key);
  if (v <= 0) throw ModelError(file.string() + ": field '" + key + "' must be positive, got " + std::to_string(v));
  return v;
}

// Sets activation and activation_name from a hidden_act-style name.
void set_activation(BertConfig& c, const std::string& name, const std::filesystem::path& file, const char* key);

// The fields BERT, ELECTRA and MPNet configs share (vocab_size, hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size, max_position_embeddings, layer_norm_eps, hidden_act).
void read_bert_like(const nlohmann::json& j, const std::filesystem::path& file, BertConfig& c);

// Positions that start after the padding id (RoBERTa, XLM-R, MPNet): position_offset = pad_token_id + 1.
void read_positions_after_padding(const nlohmann::json& j, const std::filesystem::path& file, BertConfig& c);

// BERT's and ELECTRA's embeddings: type_vocab_size token types and absolute positions only.
void read_bert_embeddings(const nlohmann::json& j, const std::filesystem::path& file, BertConfig& c);

}  // namespace attnscan::config_fields
