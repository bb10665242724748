#include "attnscan/model_location.hpp"

#include <cstdlib>

namespace attnscan {

std::filesystem::path default_model_dir() {
  if (const char* m = std::getenv("ATTNSCAN_MODEL"); m && *m) return m;
  std::filesystem::path cache;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) cache = x;
  else if (const char* h = std::getenv("HOME"); h && *h) cache = std::filesystem::path(h) / ".cache";
  else cache = ".cache";
  return cache / "attnscan" / "models" / "all-MiniLM-L6-v2";
}

}  // namespace attnscan
