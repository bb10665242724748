#pragma once
// Typed reads of fields of a JSON configuration file (config.json, tokenizer_config.json, ...): a
// missing or ill-typed field is a ModelError naming the file and the field.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/error.hpp"

namespace attnscan::config_fields {

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

inline int64_t positive(const nlohmann::json& j, const std::filesystem::path& file, const char* key) {
  auto v = field<int64_t>(j, file, key);
  if (v <= 0) throw ModelError(file.string() + ": field '" + key + "' must be positive, got " + std::to_string(v));
  return v;
}

}  // namespace attnscan::config_fields
