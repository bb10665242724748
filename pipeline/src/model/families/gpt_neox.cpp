// GPT-NeoX (model_type gpt_neox: Pythia): LayerNorm layers whose attention and feed-forward block read the same
// input side by side (use_parallel_residual) or one after the other, rotary positions on the first
// rotary_pct of each head, one projection to q|k|v stored per head ([q_h | k_h | v_h] for each head h), an
// untied LM head (embed_out).
#include "common/json_fields.hpp"
#include "model/families/decoder_fields.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

using namespace config_fields;

ModelConfig read_gpt_neox(const nlohmann::json& j, const std::filesystem::path& file) {
  ModelConfig c;
  decoder_fields::read_sizes(j, file, c);
  c.intermediate_size = positive(j, file, "intermediate_size");
  if (c.hidden_size % c.num_heads != 0) decoder_fields::refuse(file, "hidden_size", "is not a multiple of num_attention_heads");
  AttentionSpec a;
  a.heads = a.kv_heads = c.num_heads;
  a.head_dim = c.hidden_size / c.num_heads;
  a.qkv_bias = a.out_bias = field_or<bool>(j, file, "attention_bias", true);
  a.keys = KeyRange::causal();
  a.rope = decoder_fields::read_model_rope(j, file, a.head_dim, "rotary_emb_base", field_or<double>(j, file, "rotary_pct", 0.25));
  NormSpec norm;
  norm.kind = NormKind::Layer;
  norm.placement = field_or<bool>(j, file, "use_parallel_residual", true) ? NormPlacement::Parallel : NormPlacement::Pre;
  norm.eps = field_or<double>(j, file, "layer_norm_eps", 1e-5);
  FfnSpec ffn;
  ffn.kind = FfnKind::Plain;
  ffn.activation = decoder_fields::read_activation(j, file, "hidden_act", "gelu");
  ffn.intermediate = c.intermediate_size;
  c.layer_specs.assign(static_cast<std::size_t>(c.num_layers), LayerSpec{a, norm, ffn});
  decoder_fields::summarise(c, field_or<std::string>(j, file, "hidden_act", "gelu"),
                            field_or<bool>(j, file, "tie_word_embeddings", false));
  return c;
}

TensorMap gpt_neox_tensor_map(const ModelConfig& c) {
  namespace r = tensor_roles;
  TensorMap m;
  const int64_t H = c.hidden_size, I = c.intermediate_size, heads = c.num_heads;
  m.add(r::kTokens, {c.vocab_size, H}, "embed_in.weight");
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const auto at = [l](const std::string& part) { return "layers." + std::to_string(l) + "." + part; };
    const auto role = [l](const std::string& part) { return r::layer(l, part); };
    const bool bias = c.layer_spec(l).attention.qkv_bias;
    int64_t part = 0;
    for (const char* name : {r::kQ, r::kK, r::kV}) {
      m.add(role(std::string(name) + ".weight"), {H, H}, at("attention.query_key_value.weight")).part_of(part, 3, heads);
      if (bias) m.add(role(std::string(name) + ".bias"), {H}, at("attention.query_key_value.bias")).part_of(part, 3, heads);
      ++part;
    }
    m.add(role(std::string(r::kO) + ".weight"), {H, H}, at("attention.dense.weight"));
    if (bias) m.add(role(std::string(r::kO) + ".bias"), {H}, at("attention.dense.bias"));
    for (const auto& [name, stored] : {std::pair{r::kAttnIn, "input_layernorm"}, std::pair{r::kFfnIn, "post_attention_layernorm"}}) {
      m.add(role(std::string(name) + ".weight"), {H}, at(std::string(stored) + ".weight"));
      m.add(role(std::string(name) + ".bias"), {H}, at(std::string(stored) + ".bias"));
    }
    m.add(role(std::string(r::kUp) + ".weight"), {I, H}, at("mlp.dense_h_to_4h.weight"));
    m.add(role(std::string(r::kUp) + ".bias"), {I}, at("mlp.dense_h_to_4h.bias"));
    m.add(role(std::string(r::kDown) + ".weight"), {H, I}, at("mlp.dense_4h_to_h.weight"));
    m.add(role(std::string(r::kDown) + ".bias"), {H}, at("mlp.dense_4h_to_h.bias"));
  }
  m.add(r::kFinalNormW, {H}, "final_layer_norm.weight");
  m.add(r::kFinalNormB, {H}, "final_layer_norm.bias");
  m.add(r::kLmHead, {c.vocab_size, H}, "embed_out.weight").may_be_absent();
  return m;
}

}  // namespace

const ModelFamily& gpt_neox_family() {
  static const ModelFamily f = layer_family("gpt_neox", "GPT-NeoX, Pythia (GPTNeoXForCausalLM; parallel residual, partial rotary)",
                       read_gpt_neox, {"gpt_neox."},
                       {".attention.bias", ".attention.masked_bias", ".attention.rotary_emb.inv_freq"}, gpt_neox_tensor_map);
  return f;
}

}  // namespace attnscan
