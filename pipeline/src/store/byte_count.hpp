#pragma once
// Sizes in messages: "412.3 MiB", "1.82 GiB".
#include <cstdint>
#include <cstdio>
#include <string>

namespace attnscan {

inline std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", double(b) / double(1ull << 30));
  else std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / double(1ull << 20));
  return buf;
}

}  // namespace attnscan
