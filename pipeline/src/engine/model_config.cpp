#include "attnscan/model_config.hpp"

#include <fstream>
#include <sstream>

#include "attnscan/error.hpp"
#include "engine/json_file.hpp"

namespace attnscan {

namespace {

template <typename T>
T field(const nlohmann::json& j, const std::filesystem::path& file, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) throw ModelError(file.string() + ": missing field '" + key + "'");
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw ModelError(file.string() + ": field '" + key + "' has the wrong type (" + it->type_name() + ")");
  }
}

template <typename T>
T field_or(const nlohmann::json& j, const std::filesystem::path& file, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return field<T>(j, file, key);
}

int64_t positive(const nlohmann::json& j, const std::filesystem::path& file, const char* key) {
  auto v = field<int64_t>(j, file, key);
  if (v <= 0) throw ModelError(file.string() + ": field '" + key + "' must be positive, got " + std::to_string(v));
  return v;
}

}  // namespace

BertConfig load_bert_config(const std::filesystem::path& file) {
  auto j = read_json_file(file);
  if (!j.is_object()) throw ModelError(file.string() + ": expected a JSON object");
  BertConfig c;
  c.model_type = field<std::string>(j, file, "model_type");
  if (c.model_type != "bert")
    throw ModelError(file.string() + ": unsupported architecture model_type '" + c.model_type +
                     "' (attnscan supports 'bert')");
  c.vocab_size = positive(j, file, "vocab_size");
  c.hidden_size = positive(j, file, "hidden_size");
  c.num_layers = positive(j, file, "num_hidden_layers");
  c.num_heads = positive(j, file, "num_attention_heads");
  c.intermediate_size = positive(j, file, "intermediate_size");
  c.max_position_embeddings = positive(j, file, "max_position_embeddings");
  c.type_vocab_size = positive(j, file, "type_vocab_size");
  c.layer_norm_eps = field_or<double>(j, file, "layer_norm_eps", 1e-12);
  if (!(c.layer_norm_eps > 0)) throw ModelError(file.string() + ": field 'layer_norm_eps' must be positive");
  if (c.hidden_size % c.num_heads != 0)
    throw ModelError(file.string() + ": hidden_size " + std::to_string(c.hidden_size) +
                     " is not a multiple of num_attention_heads " + std::to_string(c.num_heads));
  c.activation_name = field_or<std::string>(j, file, "hidden_act", "gelu");
  if (c.activation_name == "gelu" || c.activation_name == "gelu_python")
    c.activation = Activation::GeluErf;
  else if (c.activation_name == "gelu_new" || c.activation_name == "gelu_pytorch_tanh")
    c.activation = Activation::GeluTanh;
  else if (c.activation_name == "relu")
    c.activation = Activation::Relu;
  else
    throw ModelError(file.string() + ": unsupported hidden_act '" + c.activation_name +
                     "' (supported: gelu, gelu_python, gelu_new, gelu_pytorch_tanh, relu)");
  auto pos_type = field_or<std::string>(j, file, "position_embedding_type", "absolute");
  if (pos_type != "absolute")
    throw ModelError(file.string() + ": unsupported position_embedding_type '" + pos_type + "' (supported: absolute)");
  return c;
}

TokenizerConfig load_tokenizer_config(const std::filesystem::path& dir, const BertConfig& model) {
  TokenizerConfig t;
  t.model_max_length = model.max_position_embeddings;
  auto file = dir / "tokenizer_config.json";
  if (!std::filesystem::exists(file)) return t;
  auto j = read_json_file(file);
  if (!j.is_object()) throw ModelError(file.string() + ": expected a JSON object");
  t.do_lower_case = field_or<bool>(j, file, "do_lower_case", true);
  if (j.contains("strip_accents") && !j["strip_accents"].is_null())
    t.strip_accents = field<bool>(j, file, "strip_accents");
  t.tokenize_chinese_chars = field_or<bool>(j, file, "tokenize_chinese_chars", true);
  auto it = j.find("model_max_length");
  if (it != j.end() && it->is_number()) {
    double v = it->get<double>();  // HF writes 1e30 when unset
    if (v > 0 && v < static_cast<double>(model.max_position_embeddings))
      t.model_max_length = static_cast<int64_t>(v);
  }
  if (field_or<bool>(j, file, "do_basic_tokenize", true) == false)
    throw ModelError(file.string() + ": do_basic_tokenize false is not supported");
  auto special = [&](const char* key, std::string& dst) {
    auto s = j.find(key);
    if (s == j.end() || s->is_null()) return;
    if (s->is_string()) dst = s->get<std::string>();
    else if (s->is_object() && s->contains("content")) dst = (*s)["content"].get<std::string>();
    else throw ModelError(file.string() + ": field '" + key + "' has the wrong type");
  };
  special("unk_token", t.unk_token);
  special("sep_token", t.sep_token);
  special("pad_token", t.pad_token);
  special("cls_token", t.cls_token);
  special("mask_token", t.mask_token);
  return t;
}

std::string describe(const BertConfig& c) {
  std::ostringstream s;
  s << c.model_type << " " << c.num_layers << " layers x " << c.num_heads << " heads, hidden " << c.hidden_size
    << ", intermediate " << c.intermediate_size << ", vocab " << c.vocab_size << ", " << c.activation_name;
  return s.str();
}

}  // namespace attnscan
