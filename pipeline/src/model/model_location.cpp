#include "model/model_location.hpp"

#include <cstdlib>

namespace attnscan {

std::filesystem::path models_cache_dir() {
  if (const char* c = std::getenv("ATTNSCAN_CACHE"); c && *c) return std::filesystem::path(c) / "models";
  std::filesystem::path cache;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) cache = x;
  else if (const char* h = std::getenv("HOME"); h && *h) cache = std::filesystem::path(h) / ".cache";
  else cache = ".cache";
  return cache / "attnscan" / "models";
}

std::filesystem::path default_model_dir() {
  if (const char* m = std::getenv("ATTNSCAN_MODEL"); m && *m) return m;
  return models_cache_dir() / "all-MiniLM-L6-v2";
}

}  // namespace attnscan
