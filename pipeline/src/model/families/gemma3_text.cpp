// Gemma 3's text model (model_type gemma3_text): Llama's block with the token embeddings scaled by
// sqrt(hidden_size), RMS norms that multiply by 1 + w, a norm before and after both the attention and the
// feed-forward block (sandwich), per-head query and key norms, q k^T scaled by query_pre_attn_scalar ** -0.5,
// sliding-window layers (layer_types, or every sliding_window_pattern-th layer global) with a rotary base
// of their own, and a GELU-tanh gated feed-forward block.
#include "common/json_fields.hpp"
#include "model/families/decoder_fields.hpp"
#include "model/families/family.hpp"
#include "model/families/llama_like.hpp"

namespace attnscan {

namespace {

using namespace config_fields;

// Each layer kind's rotary parameters: rope_parameters by layer type (5.x), or rope_theta, rope_scaling
// (global layers) and rope_local_base_freq (4.x).
std::pair<RopeSpec, RopeSpec> read_gemma3_rope(const nlohmann::json& j, const std::filesystem::path& file, int64_t head_dim) {
  if (auto it = j.find("rope_parameters"); it != j.end() && it->is_object() && it->contains("full_attention")) {
    const auto& p = *it;
    auto kind = [&](const char* key, double theta) {
      return p.contains(key) && p[key].is_object()
                 ? decoder_fields::read_rope(p[key], theta, head_dim, file, std::string("rope_parameters.") + key)
                 : decoder_fields::read_rope(nlohmann::json{{"rope_type", "default"}}, theta, head_dim, file, key);
    };
    return {kind("full_attention", 1000000.0), kind("sliding_attention", 10000.0)};
  }
  nlohmann::json global = j.contains("rope_scaling") && j["rope_scaling"].is_object() ? j["rope_scaling"] : nlohmann::json::object();
  global["rope_theta"] = field_or<double>(j, file, "rope_theta", 1000000.0);
  const nlohmann::json local = {{"rope_type", "default"}, {"rope_theta", field_or<double>(j, file, "rope_local_base_freq", 10000.0)}};
  return {decoder_fields::read_rope(global, 0, head_dim, file, "rope_scaling"),
          decoder_fields::read_rope(local, 0, head_dim, file, "rope_local_base_freq")};
}

ModelConfig read_gemma3_text(const nlohmann::json& j, const std::filesystem::path& file) {
  nlohmann::json llama = j;
  llama["hidden_act"] = field_or<std::string>(j, file, "hidden_activation", "gelu_pytorch_tanh");
  llama.erase("rope_parameters");  // per layer kind: read below
  llama.erase("rope_scaling");
  if (!llama.contains("head_dim")) llama["head_dim"] = 256;
  ModelConfig c = read_llama_like(llama, file);
  if (!field_or<nlohmann::json>(j, file, "attn_logit_softcapping", nullptr).is_null())
    decoder_fields::refuse(file, "attn_logit_softcapping", "is not supported (Gemma 2's; null in Gemma 3)");
  c.embedding_scale = std::sqrt(static_cast<double>(c.hidden_size));
  const int64_t head_dim = c.layer_spec(0).attention.head_dim;
  const auto [global_rope, local_rope] = read_gemma3_rope(j, file, head_dim);
  const double scalar = field_or<double>(j, file, "query_pre_attn_scalar", 256.0);
  if (!(scalar > 0)) decoder_fields::refuse(file, "query_pre_attn_scalar", "must be positive");
  std::vector<bool> sliding;
  if (!decoder_fields::read_layer_types(j, file, c.num_layers, sliding)) {
    const int64_t pattern = field_or<int64_t>(j, file, "sliding_window_pattern", 6);
    for (int64_t l = 0; l < c.num_layers; ++l) sliding.push_back((l + 1) % pattern != 0);
  }
  const int64_t window = positive(j, file, "sliding_window");
  for (int64_t l = 0; l < c.num_layers; ++l) {
    LayerSpec& s = c.layer_specs[static_cast<std::size_t>(l)];
    s.attention.qk_norm = true;
    s.attention.scale = std::pow(scalar, -0.5);
    s.attention.rope = sliding[static_cast<std::size_t>(l)] ? local_rope : global_rope;
    s.norm.kind = NormKind::RmsOnePlusWeight;
    s.norm.placement = NormPlacement::Sandwich;
  }
  slide_layers(c, sliding, window);
  c.final_norm.kind = NormKind::RmsOnePlusWeight;
  c.tied_lm_head = field_or<bool>(j, file, "tie_word_embeddings", true);
  return c;
}

// Llama's names, every norm's values 1 + w, and the sandwich's two norms after the attention and the FFN.
TensorMap gemma3_tensor_map(const ModelConfig& c) {
  namespace r = tensor_roles;
  const auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  TensorMap out;
  const TensorMap llama = llama_tensor_map(c);
  for (TensorSource s : llama.sources()) {
    if (ends_with(s.stored, "norm.weight")) s.add_one = true;
    // Llama's post_attention_layernorm feeds its FFN; Gemma's follows the attention (pre_feedforward feeds the FFN)
    if (ends_with(s.stored, "post_attention_layernorm.weight"))
      s.role.replace(s.role.find(r::kFfnIn), std::string(r::kFfnIn).size(), r::kAttnOut);
    out.add(std::move(s));
  }
  const int64_t H = c.hidden_size;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string at = "layers." + std::to_string(l) + ".";
    out.add(r::layer(l, std::string(r::kFfnIn) + ".weight"), {H}, at + "pre_feedforward_layernorm.weight").plus_one();
    out.add(r::layer(l, std::string(r::kFfnOut) + ".weight"), {H}, at + "post_feedforward_layernorm.weight").plus_one();
  }
  return out;
}

}  // namespace

const ModelFamily& gemma3_text_family() {
  static const ModelFamily f = layer_family("gemma3_text", "Gemma 3's text model (Gemma3ForCausalLM; sandwich norms, local and global layers)",
                       read_gemma3_text, {"model."}, {}, gemma3_tensor_map);
  return f;
}

}  // namespace attnscan
