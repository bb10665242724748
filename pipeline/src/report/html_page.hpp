#pragma once
// The report as one self-contained HTML file: template, style, script and data inline.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace attnscan::report {

std::string render_page(const nlohmann::json& data, const std::string& title);

// Writes `text` to PATH.tmp, fsyncs it and renames it to PATH: a reader never sees a partial file.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace attnscan::report
