#pragma once
// Llama's block, which Mistral, Qwen2 and Qwen3 change in a field or two: pre-norm RMSNorm layers, grouped-query
// attention with rotary positions, a SwiGLU feed-forward block, a final RMSNorm, an LM head tied or not. Their
// family files (llama.cpp, mistral.cpp, qwen2.cpp, qwen3.cpp) read it and add their difference.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "model/model_config.hpp"
#include "model/tensor_map.hpp"

namespace attnscan {

// The fields every Llama-style config.json has: sizes, num_key_value_heads, head_dim, rms_norm_eps, hidden_act,
// rope, attention_bias (q, k, v and o), mlp_bias, and every layer causal.
ModelConfig read_llama_like(const nlohmann::json& j, const std::filesystem::path& file);

// Layers that slide: each gets a causal window of `window` keys (the query and window - 1 before it).
void slide_layers(ModelConfig& c, const std::vector<bool>& sliding, int64_t window);

// The layers Qwen2 and Qwen3 slide: layer_types where given, else (transformers 4.x) use_sliding_window from
// max_window_layers on; each within sliding_window keys. (qwen2.cpp)
void qwen_sliding_layers(ModelConfig& c, const nlohmann::json& j, const std::filesystem::path& file);

// LlamaForCausalLM's tensor names (its "model." prefix stripped) for the roles the layer specs need.
TensorMap llama_tensor_map(const ModelConfig& c);

}  // namespace attnscan
