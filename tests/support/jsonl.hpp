#pragma once
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attnscan::test {

// Every line of a JSON-lines file.
inline std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> rows;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

}  // namespace attnscan::test
