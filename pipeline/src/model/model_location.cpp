#include "model/model_location.hpp"

#include <cstdlib>

#include "common/cache_dir.hpp"

namespace attnscan {

std::filesystem::path models_cache_dir() { return cache_dir() / "models"; }

std::filesystem::path default_model_dir() {
  if (const char* m = std::getenv("ATTNSCAN_MODEL"); m && *m) return m;
  return models_cache_dir() / "all-MiniLM-L6-v2";
}

}  // namespace attnscan
