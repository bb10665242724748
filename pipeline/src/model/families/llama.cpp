// Llama (model_type llama: Llama 2 and 3.x, SmolLM2): pre-norm RMSNorm layers, grouped-query attention with
// rotary positions (default, linear, dynamic, yarn or llama3 scaling), SwiGLU, a final RMSNorm. The block
// that mistral.cpp, qwen2.cpp and qwen3.cpp describe as differences from it.
#include "common/json_fields.hpp"
#include "model/families/decoder_fields.hpp"
#include "model/families/family.hpp"
#include "model/families/llama_like.hpp"

namespace attnscan {

using namespace config_fields;

ModelConfig read_llama_like(const nlohmann::json& j, const std::filesystem::path& file) {
  ModelConfig c;
  decoder_fields::read_sizes(j, file, c);
  c.intermediate_size = positive(j, file, "intermediate_size");
  AttentionSpec a;
  a.heads = c.num_heads;
  a.kv_heads = field_or<int64_t>(j, file, "num_key_value_heads", c.num_heads);
  if (a.kv_heads <= 0 || a.heads % a.kv_heads != 0)
    decoder_fields::refuse(file, "num_key_value_heads", "must divide num_attention_heads " + std::to_string(a.heads));
  a.head_dim = field_or<int64_t>(j, file, "head_dim", 0);
  if (a.head_dim == 0) {
    if (c.hidden_size % c.num_heads != 0)
      decoder_fields::refuse(file, "hidden_size", "is not a multiple of num_attention_heads (and head_dim is not given)");
    a.head_dim = c.hidden_size / c.num_heads;
  }
  a.qkv_bias = a.out_bias = field_or<bool>(j, file, "attention_bias", false);
  a.keys = KeyRange::causal();
  a.rope = decoder_fields::read_model_rope(j, file, a.head_dim);
  NormSpec norm;
  norm.kind = NormKind::Rms;
  norm.placement = NormPlacement::Pre;
  norm.eps = field_or<double>(j, file, "rms_norm_eps", 1e-6);
  if (!(norm.eps > 0)) decoder_fields::refuse(file, "rms_norm_eps", "must be positive");
  norm.bias = false;
  FfnSpec ffn;
  ffn.kind = FfnKind::Gated;
  ffn.activation = decoder_fields::read_activation(j, file, "hidden_act", "silu");
  ffn.intermediate = c.intermediate_size;
  ffn.bias = field_or<bool>(j, file, "mlp_bias", false);
  c.layer_specs.assign(static_cast<std::size_t>(c.num_layers), LayerSpec{a, norm, ffn});
  decoder_fields::summarise(c, field_or<std::string>(j, file, "hidden_act", "silu"),
                            field_or<bool>(j, file, "tie_word_embeddings", false));
  return c;
}

void slide_layers(ModelConfig& c, const std::vector<bool>& sliding, int64_t window) {
  for (std::size_t l = 0; l < sliding.size(); ++l)
    if (sliding[l]) c.layer_specs[l].attention.keys = KeyRange::causal_window(window);
}

TensorMap llama_tensor_map(const ModelConfig& c) {
  namespace r = tensor_roles;
  TensorMap m;
  const int64_t H = c.hidden_size;
  m.add(r::kTokens, {c.vocab_size, H}, "embed_tokens.weight");
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const LayerSpec& s = c.layer_spec(l);
    const AttentionSpec& a = s.attention;
    const auto at = [l](const std::string& part) { return "layers." + std::to_string(l) + "." + part; };
    const auto role = [l](const std::string& part) { return r::layer(l, part); };
    const int64_t q = a.heads * a.head_dim, kv = a.kv_heads * a.head_dim;
    for (const auto& [name, rows, stored] : {std::tuple{r::kQ, q, "self_attn.q_proj"}, std::tuple{r::kK, kv, "self_attn.k_proj"},
                                             std::tuple{r::kV, kv, "self_attn.v_proj"}}) {
      m.add(role(std::string(name) + ".weight"), {rows, H}, at(std::string(stored) + ".weight"));
      if (a.qkv_bias) m.add(role(std::string(name) + ".bias"), {rows}, at(std::string(stored) + ".bias"));
    }
    m.add(role(std::string(r::kO) + ".weight"), {H, q}, at("self_attn.o_proj.weight"));
    if (a.out_bias) m.add(role(std::string(r::kO) + ".bias"), {H}, at("self_attn.o_proj.bias"));
    if (a.qk_norm) {
      m.add(role(r::kQNorm), {a.head_dim}, at("self_attn.q_norm.weight"));
      m.add(role(r::kKNorm), {a.head_dim}, at("self_attn.k_norm.weight"));
    }
    m.add(role(std::string(r::kAttnIn) + ".weight"), {H}, at("input_layernorm.weight"));
    m.add(role(std::string(r::kFfnIn) + ".weight"), {H}, at("post_attention_layernorm.weight"));
    const int64_t I = s.ffn.intermediate;
    for (const auto& [name, shape, stored] : {std::tuple{r::kGate, std::vector<int64_t>{I, H}, "mlp.gate_proj"},
                                              std::tuple{r::kUp, std::vector<int64_t>{I, H}, "mlp.up_proj"},
                                              std::tuple{r::kDown, std::vector<int64_t>{H, I}, "mlp.down_proj"}}) {
      m.add(role(std::string(name) + ".weight"), shape, at(std::string(stored) + ".weight"));
      if (s.ffn.bias) m.add(role(std::string(name) + ".bias"), {shape[0]}, at(std::string(stored) + ".bias"));
    }
  }
  m.add(r::kFinalNormW, {H}, "norm.weight");
  m.add(r::kLmHead, {c.vocab_size, H}, "lm_head.weight").may_be_absent();
  return m;
}

namespace {

ModelConfig read_llama(const nlohmann::json& j, const std::filesystem::path& file) { return read_llama_like(j, file); }

}  // namespace

const ModelFamily& llama_family() {
  static const ModelFamily f = layer_family("llama", "Llama 2 and 3.x, SmolLM2 (LlamaForCausalLM; grouped-query attention, RoPE, SwiGLU)",
                       read_llama, {"model."}, {}, llama_tensor_map);
  return f;
}

}  // namespace attnscan
