#include "model/tensor_names.hpp"

namespace attnscan {

std::string layer_tensor_name(int64_t layer, const char* suffix) {
  return "encoder.layer." + std::to_string(layer) + "." + suffix;
}

std::vector<TensorSpec> required_tensors(const ModelConfig& c) {
  const int64_t H = c.hidden_size, I = c.intermediate_size, E = c.embedding_size > 0 ? c.embedding_size : H;
  namespace e = embedding_tensor;
  namespace l = layer_tensor;
  const int64_t normed = c.norm_after_projection ? H : E;  // the width the embeddings' LayerNorm sees
  std::vector<TensorSpec> specs = {{e::kWord, {c.vocab_size, E}}};
  // A weight, and its bias where the model has one.
  auto add = [&](std::string weight, std::string bias, std::vector<int64_t> shape, bool with_bias) {
    const int64_t out = shape[0];
    specs.push_back({std::move(weight), std::move(shape)});
    if (with_bias) specs.push_back({std::move(bias), {out}});
  };
  if (c.absolute_positions) specs.push_back({e::kPosition, {c.max_position_embeddings, E}});
  if (c.token_types) specs.push_back({e::kTokenType, {c.type_vocab_size, E}});
  add(e::kLnW, e::kLnB, {normed}, c.norm_bias);
  // DeBERTa's embed_proj has no bias
  if (c.project_embeddings) add(e::kProjectW, e::kProjectB, {H, E}, !c.norm_after_projection);
  if (c.relative_attention_buckets > 0) specs.push_back({kRelativeAttentionBias, {c.relative_attention_buckets, c.num_heads}});
  const auto& d = c.disentangled;
  if (d.relative) {
    specs.push_back({kRelEmbeddings, {2 * d.span(), H}});
    if (d.norm_rel_embeddings) add(kRelNormW, kRelNormB, {H}, true);
  }
  const int64_t inter_out = c.gated_ffn ? 2 * I : I;
  for (int64_t layer = 0; layer < c.stored_layers(); ++layer) {
    auto name = [&](const char* suffix) { return layer_tensor_name(layer, suffix); };
    if (c.fused_qkv) {
      add(name(l::kQkvW), name(l::kQkvB), {3 * H, H}, c.attention_bias);
    } else {
      add(name(l::kQueryW), name(l::kQueryB), {H, H}, c.attention_bias);
      add(name(l::kKeyW), name(l::kKeyB), {H, H}, c.attention_bias);
      add(name(l::kValueW), name(l::kValueB), {H, H}, c.attention_bias);
    }
    add(name(l::kAttnOutW), name(l::kAttnOutB), {H, H}, c.attention_bias);
    if (!c.pre_norm || layer > 0) add(name(l::kAttnLnW), name(l::kAttnLnB), {H}, c.norm_bias);  // pre-norm: none before layer 0
    add(name(l::kInterW), name(l::kInterB), {inter_out, H}, c.ffn_bias);
    add(name(l::kOutW), name(l::kOutB), {H, I}, c.ffn_bias);
    add(name(l::kOutLnW), name(l::kOutLnB), {H}, c.norm_bias);
    if (d.adds_c2p() && !d.share_att_key) add(name(l::kPosKeyW), name(l::kPosKeyB), {H, H}, true);
    if (d.adds_p2c() && !d.share_att_key) add(name(l::kPosQueryW), name(l::kPosQueryB), {H, H}, true);
  }
  if (c.pre_norm) add(kFinalNormW, kFinalNormB, {H}, c.norm_bias);
  return specs;
}

}  // namespace attnscan
