#include "common/json_file.hpp"

#include <fstream>
#include <map>
#include <mutex>

#include "common/error.hpp"

namespace attnscan {

namespace {

struct ReadCounts {
  std::mutex mutex;
  std::map<std::string, std::size_t> by_path;  // lexically normal path -> reads
};

ReadCounts& read_counts() {
  static ReadCounts counts;
  return counts;
}

void count_read(const std::filesystem::path& path) {
  auto& c = read_counts();
  const std::lock_guard<std::mutex> lock(c.mutex);
  ++c.by_path[path.lexically_normal().string()];
}

}  // namespace

nlohmann::json read_json_file(const std::filesystem::path& path) {
  count_read(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path.string() + ": cannot open file");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ModelError(path.string() + ": invalid JSON: " + e.what());
  }
}

std::size_t json_file_reads(const std::filesystem::path& path) {
  auto& c = read_counts();
  const std::lock_guard<std::mutex> lock(c.mutex);
  const auto it = c.by_path.find(path.lexically_normal().string());
  return it == c.by_path.end() ? 0 : it->second;
}

}  // namespace attnscan
