#pragma once
#include <filesystem>
#include <string>

namespace attnscan {
// Hex SHA-256 of a file's bytes (OpenSSL); throws Error naming the file when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);
// The same of what is left to read of an open file (read from its current offset to its end).
std::string sha256_fd(int fd, const std::filesystem::path& path);
std::string sha256_text(const std::string& text);
}  // namespace attnscan
