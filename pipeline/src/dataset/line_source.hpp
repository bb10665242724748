#pragma once
// Buffered line reader: strips a UTF-8 BOM at the start, "\n" or "\r\n" line ends, and accepts a
// missing final newline. Tracks 1-based line numbers.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace attnscan {

class LineSource {
 public:
  explicit LineSource(const std::filesystem::path& path);
  // The next line without its line end; false at the end of the file.
  bool next(std::string& line);
  uint64_t line_number() const { return line_; }
  double fraction() const { return size_ ? static_cast<double>(consumed_) / static_cast<double>(size_) : 1.0; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::ifstream in_;
  uint64_t line_ = 0;
  uint64_t size_ = 0, consumed_ = 0;
};

}  // namespace attnscan
