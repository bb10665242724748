#include "attnscan/model_config.hpp"

#include <fstream>
#include <sstream>

#include "attnscan/error.hpp"
#include "engine/config_fields.hpp"
#include "engine/families/family.hpp"
#include "engine/json_file.hpp"

namespace attnscan {

BertConfig load_bert_config(const std::filesystem::path& file) {
  auto j = read_json_file(file);
  if (!j.is_object()) throw ModelError(file.string() + ": expected a JSON object");
  const auto& family = find_family(config_fields::field<std::string>(j, file, "model_type"), file);
  BertConfig c = family.read_config(j, file);
  c.model_type = family.model_type;
  return c;
}

TokenizerConfig load_tokenizer_config(const std::filesystem::path& dir, const BertConfig& model) {
  TokenizerConfig t;
  t.model_max_length = model.max_tokens();
  auto file = dir / "tokenizer_config.json";
  if (!std::filesystem::exists(file)) return t;
  auto j = read_json_file(file);
  if (!j.is_object()) throw ModelError(file.string() + ": expected a JSON object");
  t.do_lower_case = config_fields::field_or<bool>(j, file, "do_lower_case", true);
  if (j.contains("strip_accents") && !j["strip_accents"].is_null())
    t.strip_accents = config_fields::field<bool>(j, file, "strip_accents");
  t.tokenize_chinese_chars = config_fields::field_or<bool>(j, file, "tokenize_chinese_chars", true);
  auto it = j.find("model_max_length");
  if (it != j.end() && it->is_number()) {
    double v = it->get<double>();  // HF writes 1e30 when unset
    if (v > 0 && v < static_cast<double>(model.max_tokens()))
      t.model_max_length = static_cast<int64_t>(v);
  }
  if (config_fields::field_or<bool>(j, file, "do_basic_tokenize", true) == false)
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
