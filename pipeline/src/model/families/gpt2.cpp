// GPT-2 (model_type gpt2): learned absolute positions, pre-norm LayerNorm layers, one Conv1D (stored [in, out])
// projecting to q|k|v, a gelu_new feed-forward block, a final LayerNorm, the LM head tied to the token
// embeddings. Old checkpoints carry each layer's causal mask as a buffer (attn.bias, attn.masked_bias): skipped.
#include "common/json_fields.hpp"
#include "model/families/decoder_fields.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

using namespace config_fields;

ModelConfig read_gpt2(const nlohmann::json& j, const std::filesystem::path& file) {
  ModelConfig c;
  decoder_fields::read_sizes(j, file, c, {"n_embd", "n_layer", "n_head", "n_positions"});
  c.intermediate_size = field_or<int64_t>(j, file, "n_inner", 4 * c.hidden_size);
  c.absolute_positions = true;  // wpe
  if (c.hidden_size % c.num_heads != 0) decoder_fields::refuse(file, "n_embd", "is not a multiple of n_head");
  if (field_or<bool>(j, file, "reorder_and_upcast_attn", false))
    decoder_fields::refuse(file, "reorder_and_upcast_attn", "true is not supported");
  if (field_or<bool>(j, file, "add_cross_attention", false))
    decoder_fields::refuse(file, "add_cross_attention", "true is not supported (attnscan runs self-attention only)");
  const bool scale = field_or<bool>(j, file, "scale_attn_weights", true);
  const bool by_layer = field_or<bool>(j, file, "scale_attn_by_inverse_layer_idx", false);
  NormSpec norm;
  norm.kind = NormKind::Layer;
  norm.placement = NormPlacement::Pre;
  norm.eps = field_or<double>(j, file, "layer_norm_epsilon", 1e-5);
  FfnSpec ffn;
  ffn.kind = FfnKind::Plain;
  ffn.activation = decoder_fields::read_activation(j, file, "activation_function", "gelu_new");
  ffn.intermediate = c.intermediate_size;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    AttentionSpec a;
    a.heads = a.kv_heads = c.num_heads;
    a.head_dim = c.hidden_size / c.num_heads;
    a.qkv_bias = a.out_bias = true;
    a.keys = KeyRange::causal();
    // As GPT2Attention: scaling = head_dim ** -0.5 (1 without scale_attn_weights), divided by layer + 1
    a.scale = scale ? std::pow(static_cast<double>(a.head_dim), -0.5) : 1.0;
    if (by_layer) a.scale /= static_cast<double>(l + 1);
    c.layer_specs.push_back({a, norm, ffn});
  }
  decoder_fields::summarise(c, field_or<std::string>(j, file, "activation_function", "gelu_new"),
                            field_or<bool>(j, file, "tie_word_embeddings", true));
  return c;
}

TensorMap gpt2_tensor_map(const ModelConfig& c) {
  namespace r = tensor_roles;
  TensorMap m;
  const int64_t H = c.hidden_size, I = c.intermediate_size;
  m.add(r::kTokens, {c.vocab_size, H}, "wte.weight");
  m.add(r::kPositions, {c.max_position_embeddings, H}, "wpe.weight");
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const auto at = [l](const std::string& part) { return "h." + std::to_string(l) + "." + part; };
    const auto role = [l](const std::string& part) { return r::layer(l, part); };
    int64_t part = 0;
    for (const char* name : {r::kQ, r::kK, r::kV}) {  // c_attn: [H, 3H] as Conv1D stores it, q|k|v
      m.add(role(std::string(name) + ".weight"), {H, H}, at("attn.c_attn.weight")).transposed().part_of(part, 3);
      m.add(role(std::string(name) + ".bias"), {H}, at("attn.c_attn.bias")).part_of(part, 3);
      ++part;
    }
    m.add(role(std::string(r::kO) + ".weight"), {H, H}, at("attn.c_proj.weight")).transposed();
    m.add(role(std::string(r::kO) + ".bias"), {H}, at("attn.c_proj.bias"));
    m.add(role(std::string(r::kAttnIn) + ".weight"), {H}, at("ln_1.weight"));
    m.add(role(std::string(r::kAttnIn) + ".bias"), {H}, at("ln_1.bias"));
    m.add(role(std::string(r::kFfnIn) + ".weight"), {H}, at("ln_2.weight"));
    m.add(role(std::string(r::kFfnIn) + ".bias"), {H}, at("ln_2.bias"));
    m.add(role(std::string(r::kUp) + ".weight"), {I, H}, at("mlp.c_fc.weight")).transposed();
    m.add(role(std::string(r::kUp) + ".bias"), {I}, at("mlp.c_fc.bias"));
    m.add(role(std::string(r::kDown) + ".weight"), {H, I}, at("mlp.c_proj.weight")).transposed();
    m.add(role(std::string(r::kDown) + ".bias"), {H}, at("mlp.c_proj.bias"));
  }
  m.add(r::kFinalNormW, {H}, "ln_f.weight");
  m.add(r::kFinalNormB, {H}, "ln_f.bias");
  m.add(r::kLmHead, {c.vocab_size, H}, "lm_head.weight").may_be_absent();
  return m;
}

}  // namespace

const ModelFamily& gpt2_family() {
  static const ModelFamily f = layer_family("gpt2", "GPT-2 (GPT2LMHeadModel, GPT2Model)", read_gpt2, {"transformer."},
                       {".attn.bias", ".attn.masked_bias"}, gpt2_tensor_map);
  return f;
}

}  // namespace attnscan
