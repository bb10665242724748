#include "common/cache_dir.hpp"

#include <cstdlib>

namespace attnscan {

std::filesystem::path cache_dir() {
  if (const char* c = std::getenv("ATTNSCAN_CACHE"); c && *c) return c;
  std::filesystem::path cache;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) cache = x;
  else if (const char* h = std::getenv("HOME"); h && *h) cache = std::filesystem::path(h) / ".cache";
  else cache = ".cache";
  return cache / "attnscan";
}

}  // namespace attnscan
