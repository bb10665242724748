// tokenizer_config.json and special_tokens_map.json, read once into TokenizerConfigFiles.
#include <charconv>

#include "common/json_fields.hpp"
#include "common/json_file.hpp"
#include "tokenizer/tokenizer_config.hpp"

namespace attnscan {

namespace {

using nlohmann::json;

// A special token: a string, an AddedToken object with a string "content", or null (unset).
std::optional<std::string> special_name(const json& j, const std::filesystem::path& file, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    return (*it)["content"].get<std::string>();
  throw ModelError(file.string() + ": field '" + key + "' has the wrong type (expected a string or an object with "
                   "a string \"content\")");
}

SpecialTokenNames special_names(const json& j, const std::filesystem::path& file) {
  SpecialTokenNames s;
  s.cls = special_name(j, file, "cls_token");
  s.sep = special_name(j, file, "sep_token");
  s.pad = special_name(j, file, "pad_token");
  s.unk = special_name(j, file, "unk_token");
  s.mask = special_name(j, file, "mask_token");
  s.bos = special_name(j, file, "bos_token");
  s.eos = special_name(j, file, "eos_token");
  return s;
}

template <typename T>
std::optional<T> optional_field(const json& j, const std::filesystem::path& file, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return config_fields::field<T>(j, file, key);
}

std::vector<AddedTokenEntry> added_tokens_decoder(const json& d, const std::filesystem::path& file) {
  if (!d.is_object()) throw ModelError(file.string() + ": field 'added_tokens_decoder' must be an object of id -> token");
  std::vector<AddedTokenEntry> out;
  for (auto it = d.begin(); it != d.end(); ++it) {
    const std::string& key = it.key();
    const std::string where = file.string() + ": added_tokens_decoder entry " + key;
    const auto& t = it.value();
    if (!t.is_object() || !t.contains("content") || !t["content"].is_string())
      throw ModelError(where + " has no \"content\"");
    AddedTokenEntry a;
    a.content = t["content"].get<std::string>();
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), a.id);
    if (ec != std::errc() || end != key.data() + key.size() || a.id < 0)
      throw ModelError(file.string() + ": added_tokens_decoder key '" + key + "' is not a token id");
    const auto flag = [&](const char* name, bool fallback) {
      auto f = t.find(name);
      if (f == t.end() || f->is_null()) return fallback;
      if (!f->is_boolean()) throw ModelError(where + ": field '" + name + "' must be true or false");
      return f->get<bool>();
    };
    a.lstrip = flag("lstrip", false);
    a.rstrip = flag("rstrip", false);
    a.single_word = flag("single_word", false);
    a.special = flag("special", true);
    if (t.contains("normalized") && !t["normalized"].is_null()) a.normalized = flag("normalized", true);
    out.push_back(std::move(a));
  }
  return out;
}

json object_file(const std::filesystem::path& file) {
  json j = read_json_file(file);
  if (!j.is_object()) throw ModelError(file.string() + ": expected a JSON object");
  return j;
}

}  // namespace

TokenizerConfigFiles read_tokenizer_config_files(const std::filesystem::path& dir) {
  TokenizerConfigFiles f;
  if (const auto map = dir / "special_tokens_map.json"; std::filesystem::exists(map)) {
    f.map_file = map;
    f.map_specials = special_names(object_file(map), map);
  }
  const auto file = dir / "tokenizer_config.json";
  if (!std::filesystem::exists(file)) return f;
  f.config_file = file;
  const json j = object_file(file);
  f.do_lower_case = optional_field<bool>(j, file, "do_lower_case");
  f.strip_accents = optional_field<bool>(j, file, "strip_accents");
  f.tokenize_chinese_chars = optional_field<bool>(j, file, "tokenize_chinese_chars");
  f.do_basic_tokenize = optional_field<bool>(j, file, "do_basic_tokenize");
  f.add_prefix_space = optional_field<bool>(j, file, "add_prefix_space");
  f.remove_space = optional_field<bool>(j, file, "remove_space");
  f.keep_accents = optional_field<bool>(j, file, "keep_accents");
  f.split_by_punct = optional_field<bool>(j, file, "split_by_punct");
  if (auto it = j.find("model_max_length"); it != j.end() && it->is_number()) f.model_max_length = it->get<double>();
  f.tokenizer_class = optional_field<std::string>(j, file, "tokenizer_class").value_or("");
  f.specials = special_names(j, file);
  if (auto it = j.find("added_tokens_decoder"); it != j.end() && !it->is_null())
    f.added_tokens_decoder = added_tokens_decoder(*it, file);
  return f;
}

TokenizerConfig tokenizer_config(const TokenizerConfigFiles& f, const TokenizerFacts& facts) {
  TokenizerConfig t;
  t.model_max_length = facts.max_tokens;
  if (!f.has_config()) return t;
  t.do_lower_case = f.do_lower_case.value_or(true);
  t.strip_accents = f.strip_accents;
  t.tokenize_chinese_chars = f.tokenize_chinese_chars.value_or(true);
  if (f.model_max_length && *f.model_max_length > 0 && *f.model_max_length < static_cast<double>(facts.max_tokens))
    t.model_max_length = static_cast<int64_t>(*f.model_max_length);
  if (f.do_basic_tokenize == false)
    throw ModelError(f.config_file.string() + ": do_basic_tokenize false is not supported");
  const auto take = [](const std::optional<std::string>& from, std::string& to) {
    if (from) to = *from;
  };
  take(f.specials.unk, t.unk_token);
  take(f.specials.sep, t.sep_token);
  take(f.specials.pad, t.pad_token);
  take(f.specials.cls, t.cls_token);
  take(f.specials.mask, t.mask_token);
  t.pad_named = f.specials.pad.has_value();
  t.bos_token = f.specials.bos ? f.specials.bos : f.map_specials.bos;
  t.eos_token = f.specials.eos ? f.specials.eos : f.map_specials.eos;
  return t;
}

}  // namespace attnscan
