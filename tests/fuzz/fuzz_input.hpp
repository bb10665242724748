#pragma once
// Helpers shared by the libFuzzer targets: inputs that must go through a file, and the rule that
// only attnscan's own errors may come out of a parser (anything else, or a crash, is a finding).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace attnscan::fuzz {

// A per-process scratch file, removed when the process ends normally (libFuzzer's exit after its time).
class ScratchFile {
 public:
  explicit ScratchFile(const char* suffix)
      : path_(std::filesystem::temp_directory_path() / ("attnscan-fuzz-" + std::to_string(::getpid()) + suffix)) {}
  ~ScratchFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The fuzz input written to the process's scratch file for `suffix`, whose path is returned.
inline std::filesystem::path as_file(const uint8_t* data, std::size_t size, const char* suffix) {
  static std::map<std::string, ScratchFile> scratch;
  const auto& path = scratch.try_emplace(suffix, suffix).first->second.path();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                static_cast<std::streamsize>(size));
  return path;
}

}  // namespace attnscan::fuzz
