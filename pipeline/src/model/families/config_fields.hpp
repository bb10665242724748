#pragma once
// The config.json fields several model families share, read into their ModelConfig (the typed field
// reads themselves: common/json_fields.hpp).
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/json_fields.hpp"
#include "model/model_config.hpp"

namespace attnscan::config_fields {

// Sets activation and activation_name from a hidden_act-style name.
void set_activation(ModelConfig& c, const std::string& name, const std::filesystem::path& file, const char* key);

// The fields BERT, ELECTRA and MPNet configs share (vocab_size, hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size, max_position_embeddings, layer_norm_eps, hidden_act).
void read_bert_like(const nlohmann::json& j, const std::filesystem::path& file, ModelConfig& c);

// Positions that start after the padding id (RoBERTa, XLM-R, MPNet): position_offset = pad_token_id + 1.
void read_positions_after_padding(const nlohmann::json& j, const std::filesystem::path& file, ModelConfig& c);

// BERT's and ELECTRA's embeddings: type_vocab_size token types and absolute positions only.
void read_bert_embeddings(const nlohmann::json& j, const std::filesystem::path& file, ModelConfig& c);

}  // namespace attnscan::config_fields
