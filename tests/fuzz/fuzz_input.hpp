#pragma once
// Helpers shared by the libFuzzer targets: inputs that must go through a file, and the rule that
// only attnscan's own errors may come out of a parser (anything else, or a crash, is a finding).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace attnscan::fuzz {

// The fuzz input written to a per-process scratch file whose path is returned.
inline std::filesystem::path as_file(const uint8_t* data, std::size_t size, const char* suffix) {
  const auto path = std::filesystem::temp_directory_path() / ("attnscan-fuzz-" + std::to_string(::getpid()) + suffix);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                static_cast<std::streamsize>(size));
  return path;
}

}  // namespace attnscan::fuzz
