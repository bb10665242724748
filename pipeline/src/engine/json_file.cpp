#include "engine/json_file.hpp"

#include <fstream>

#include "attnscan/error.hpp"

namespace attnscan {

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path.string() + ": cannot open file");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ModelError(path.string() + ": invalid JSON: " + e.what());
  }
}

}  // namespace attnscan
