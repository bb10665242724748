#pragma once
// The one table of canonical tensor names (Hugging Face BertModel names without the "bert." prefix;
// every family's checkpoint names map onto them, model/families/) and the shapes a config requires.
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.hpp"

namespace attnscan {

struct TensorSpec {
  std::string name;             // canonical name, e.g. "encoder.layer.3.attention.self.query.weight"
  std::vector<int64_t> shape;  // required shape for the config
};

// Every tensor the encoder needs, in a fixed order (embeddings, then stored layer 0..L-1).
std::vector<TensorSpec> required_tensors(const ModelConfig& config);

// Per-layer names, relative to "encoder.layer.{i}.".
namespace layer_tensor {
inline constexpr const char* kQueryW = "attention.self.query.weight";
inline constexpr const char* kQueryB = "attention.self.query.bias";
inline constexpr const char* kKeyW = "attention.self.key.weight";
inline constexpr const char* kKeyB = "attention.self.key.bias";
inline constexpr const char* kValueW = "attention.self.value.weight";
inline constexpr const char* kValueB = "attention.self.value.bias";
inline constexpr const char* kAttnOutW = "attention.output.dense.weight";
inline constexpr const char* kAttnOutB = "attention.output.dense.bias";
inline constexpr const char* kAttnLnW = "attention.output.LayerNorm.weight";
inline constexpr const char* kAttnLnB = "attention.output.LayerNorm.bias";
inline constexpr const char* kInterW = "intermediate.dense.weight";
inline constexpr const char* kInterB = "intermediate.dense.bias";
inline constexpr const char* kOutW = "output.dense.weight";
inline constexpr const char* kOutB = "output.dense.bias";
inline constexpr const char* kOutLnW = "output.LayerNorm.weight";
inline constexpr const char* kOutLnB = "output.LayerNorm.bias";
inline constexpr const char* kQkvW = "attention.self.qkv.weight";  // ModernBERT: query, key, value in one
inline constexpr const char* kQkvB = "attention.self.qkv.bias";
// DeBERTa without share_att_key: the position projections of c2p and p2c
inline constexpr const char* kPosKeyW = "attention.self.pos_key_proj.weight";
inline constexpr const char* kPosKeyB = "attention.self.pos_key_proj.bias";
inline constexpr const char* kPosQueryW = "attention.self.pos_query_proj.weight";
inline constexpr const char* kPosQueryB = "attention.self.pos_query_proj.bias";
}  // namespace layer_tensor

namespace embedding_tensor {
inline constexpr const char* kWord = "embeddings.word_embeddings.weight";
inline constexpr const char* kPosition = "embeddings.position_embeddings.weight";
inline constexpr const char* kTokenType = "embeddings.token_type_embeddings.weight";
inline constexpr const char* kLnW = "embeddings.LayerNorm.weight";
inline constexpr const char* kLnB = "embeddings.LayerNorm.bias";
inline constexpr const char* kProjectW = "embeddings_project.weight";  // embedding_size != hidden_size
inline constexpr const char* kProjectB = "embeddings_project.bias";
}  // namespace embedding_tensor

inline constexpr const char* kRelativeAttentionBias = "encoder.relative_attention_bias.weight";  // [buckets, heads]
inline constexpr const char* kFinalNormW = "encoder.final_norm.weight";  // pre-norm models (ModernBERT)
inline constexpr const char* kFinalNormB = "encoder.final_norm.bias";
inline constexpr const char* kRelEmbeddings = "encoder.rel_embeddings.weight";  // DeBERTa: [2 * span, hidden]
inline constexpr const char* kRelNormW = "encoder.LayerNorm.weight";            // DeBERTa: norm_rel_ebd layer_norm
inline constexpr const char* kRelNormB = "encoder.LayerNorm.bias";

std::string layer_tensor_name(int64_t layer, const char* suffix);

}  // namespace attnscan
