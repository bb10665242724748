#include "model/families/decoder_fields.hpp"

#include "common/error.hpp"
#include "common/json_fields.hpp"

namespace attnscan::decoder_fields {

using namespace config_fields;

void refuse(const std::filesystem::path& file, const std::string& key, const std::string& why) {
  throw ModelError(file.string() + ": field '" + key + "' " + why);
}

void read_sizes(const nlohmann::json& j, const std::filesystem::path& file, ModelConfig& c, const SizeFields& names) {
  c.vocab_size = positive(j, file, "vocab_size");
  c.hidden_size = c.embedding_size = positive(j, file, names.hidden);
  c.num_layers = positive(j, file, names.layers);
  c.num_heads = positive(j, file, names.heads);
  c.max_position_embeddings = positive(j, file, names.positions);
  c.token_types = false;
  c.absolute_positions = false;
}

void summarise(ModelConfig& c, const std::string& activation_name, bool tied_lm_head) {
  const LayerSpec& first = c.layer_spec(0);
  c.final_norm = first.norm;
  c.layer_norm_eps = first.norm.eps;
  c.activation = first.ffn.activation;
  c.activation_name = activation_name;
  c.tied_lm_head = tied_lm_head;
}

RopeSpec read_rope(const nlohmann::json& params, double theta, int64_t head_dim, const std::filesystem::path& file,
                   const std::string& where) {
  if (!params.is_object()) refuse(file, where, "must be an object");
  RopeSpec r;
  r.theta = field_or<double>(params, file, "rope_theta", theta);
  if (!(r.theta > 0)) refuse(file, where + ".rope_theta", "must be positive");
  const double partial = field_or<double>(params, file, "partial_rotary_factor", 1.0);
  r.dims = static_cast<int64_t>(static_cast<double>(head_dim) * partial);  // as HF: int(head_dim * factor)
  if (r.dims <= 0 || r.dims % 2 != 0 || r.dims > head_dim)
    refuse(file, where + ".partial_rotary_factor", "gives " + std::to_string(r.dims) + " rotated dimensions of " +
                                                       std::to_string(head_dim) + " (must be even and positive)");
  // 4.x wrote the kind as "type" in old configs, "rope_type" since
  const std::string type = params.contains("rope_type") ? field<std::string>(params, file, "rope_type")
                                                        : field_or<std::string>(params, file, "type", "default");
  const std::string fields = where + ".";
  auto factor = [&] {
    const double f = field<double>(params, file, "factor");
    if (!(f >= 1)) refuse(file, fields + "factor", "must be at least 1");
    return f;
  };
  if (type == "default") {
    r.type = RopeType::Default;
  } else if (type == "linear") {
    r.type = RopeType::Linear, r.factor = factor();
  } else if (type == "dynamic") {
    r.type = RopeType::Dynamic, r.factor = factor();
  } else if (type == "llama3") {
    r.type = RopeType::Llama3, r.factor = factor();
    r.low_freq_factor = field<double>(params, file, "low_freq_factor");
    r.high_freq_factor = field<double>(params, file, "high_freq_factor");
    r.original_max_positions = positive(params, file, "original_max_position_embeddings");
    if (!(r.high_freq_factor > r.low_freq_factor)) refuse(file, fields + "high_freq_factor", "must exceed low_freq_factor");
  } else if (type == "yarn") {
    r.type = RopeType::Yarn, r.factor = factor();
    r.original_max_positions = positive(params, file, "original_max_position_embeddings");
    r.attention_factor = field_or<double>(params, file, "attention_factor", -1.0);
    r.beta_fast = field_or<double>(params, file, "beta_fast", 32.0);
    r.beta_slow = field_or<double>(params, file, "beta_slow", 1.0);
    r.mscale = field_or<double>(params, file, "mscale", 0.0);
    r.mscale_all_dim = field_or<double>(params, file, "mscale_all_dim", 0.0);
    r.truncate = field_or<bool>(params, file, "truncate", true);
  } else {
    refuse(file, fields + "rope_type", "'" + type + "' is not supported (supported: default, linear, dynamic, yarn, llama3)");
  }
  return r;
}

RopeSpec read_model_rope(const nlohmann::json& j, const std::filesystem::path& file, int64_t head_dim,
                         const char* theta_key, double partial) {
  if (auto it = j.find("rope_parameters"); it != j.end() && !it->is_null()) {
    nlohmann::json params = *it;
    if (!params.contains("partial_rotary_factor") && partial != 1.0) params["partial_rotary_factor"] = partial;
    return read_rope(params, field_or<double>(j, file, theta_key, 10000.0), head_dim, file, "rope_parameters");
  }
  nlohmann::json params = j.contains("rope_scaling") && j["rope_scaling"].is_object() ? j["rope_scaling"]
                                                                                    : nlohmann::json::object();
  params["rope_theta"] = field_or<double>(j, file, theta_key, 10000.0);
  params["partial_rotary_factor"] = field_or<double>(j, file, "partial_rotary_factor", partial);
  return read_rope(params, 10000.0, head_dim, file, params.contains("factor") ? "rope_scaling" : theta_key);
}

bool read_layer_types(const nlohmann::json& j, const std::filesystem::path& file, int64_t layers,
                      std::vector<bool>& sliding) {
  auto it = j.find("layer_types");
  if (it == j.end() || it->is_null()) return false;
  if (!it->is_array() || static_cast<int64_t>(it->size()) != layers)
    refuse(file, "layer_types", "must list one kind per layer (" + std::to_string(layers) + ")");
  sliding.clear();
  for (const auto& kind : *it) {
    const std::string k = kind.is_string() ? kind.get<std::string>() : "";
    if (k != "full_attention" && k != "sliding_attention")
      refuse(file, "layer_types", "holds '" + kind.dump() + "' (supported: full_attention, sliding_attention)");
    sliding.push_back(k == "sliding_attention");
  }
  return true;
}

Activation read_activation(const nlohmann::json& j, const std::filesystem::path& file, const char* key,
                           const std::string& fallback) {
  const std::string name = field_or<std::string>(j, file, key, fallback);
  Activation a;
  if (!activation_named(name, a))
    refuse(file, key, "'" + name + "' is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh, relu, silu)");
  return a;
}

}  // namespace attnscan::decoder_fields
