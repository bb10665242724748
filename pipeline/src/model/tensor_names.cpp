#include "model/tensor_names.hpp"

namespace attnscan {

std::string layer_tensor_name(int64_t layer, const char* suffix) {
  return "encoder.layer." + std::to_string(layer) + "." + suffix;
}

std::vector<TensorSpec> required_tensors(const BertConfig& c) {
  const int64_t H = c.hidden_size, I = c.intermediate_size, E = c.embedding_size > 0 ? c.embedding_size : H;
  namespace e = embedding_tensor;
  namespace l = layer_tensor;
  const int64_t normed = c.norm_after_projection ? H : E;  // the width the embeddings' LayerNorm sees
  std::vector<TensorSpec> specs = {{e::kWord, {c.vocab_size, E}}};
  if (c.absolute_positions) specs.push_back({e::kPosition, {c.max_position_embeddings, E}});
  if (c.token_types) specs.push_back({e::kTokenType, {c.type_vocab_size, E}});
  specs.push_back({e::kLnW, {normed}});
  specs.push_back({e::kLnB, {normed}});
  if (c.project_embeddings) {
    specs.push_back({e::kProjectW, {H, E}});
    if (!c.norm_after_projection) specs.push_back({e::kProjectB, {H}});  // DeBERTa's embed_proj has no bias
  }
  if (c.relative_attention_buckets > 0) specs.push_back({kRelativeAttentionBias, {c.relative_attention_buckets, c.num_heads}});
  const auto& d = c.disentangled;
  if (d.relative) {
    specs.push_back({kRelEmbeddings, {2 * d.span(), H}});
    if (d.norm_rel_embeddings) {
      specs.push_back({kRelNormW, {H}});
      specs.push_back({kRelNormB, {H}});
    }
  }
  const std::pair<const char*, std::vector<int64_t>> per_layer[] = {
      {l::kQueryW, {H, H}},   {l::kQueryB, {H}},   {l::kKeyW, {H, H}},   {l::kKeyB, {H}},
      {l::kValueW, {H, H}},   {l::kValueB, {H}},   {l::kAttnOutW, {H, H}}, {l::kAttnOutB, {H}},
      {l::kAttnLnW, {H}},     {l::kAttnLnB, {H}},  {l::kInterW, {I, H}},  {l::kInterB, {I}},
      {l::kOutW, {H, I}},     {l::kOutB, {H}},     {l::kOutLnW, {H}},     {l::kOutLnB, {H}},
  };
  std::vector<std::pair<const char*, std::vector<int64_t>>> position_projections;  // DeBERTa, unshared
  if (d.adds_c2p() && !d.share_att_key) position_projections.insert(position_projections.end(), {{l::kPosKeyW, {H, H}}, {l::kPosKeyB, {H}}});
  if (d.adds_p2c() && !d.share_att_key) position_projections.insert(position_projections.end(), {{l::kPosQueryW, {H, H}}, {l::kPosQueryB, {H}}});
  for (int64_t layer = 0; layer < c.stored_layers(); ++layer) {
    for (const auto& [suffix, shape] : per_layer) specs.push_back({layer_tensor_name(layer, suffix), shape});
    for (const auto& [suffix, shape] : position_projections) specs.push_back({layer_tensor_name(layer, suffix), shape});
  }
  return specs;
}

}  // namespace attnscan
