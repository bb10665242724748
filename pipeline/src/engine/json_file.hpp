#pragma once
// Reads a JSON file with nlohmann::json, turning syntax errors into ModelError naming the file.
#include <filesystem>
#include <nlohmann/json.hpp>

namespace attnscan {
nlohmann::json read_json_file(const std::filesystem::path& path);
}
