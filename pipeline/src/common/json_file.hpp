#pragma once
// Reads a JSON file with nlohmann::json, turning syntax errors into ModelError naming the file.
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace attnscan {
nlohmann::json read_json_file(const std::filesystem::path& path);
// How often this process has read `path` through read_json_file (tests: a file read once per load).
std::size_t json_file_reads(const std::filesystem::path& path);
}
