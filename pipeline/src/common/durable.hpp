#pragma once
// Making a finished file visible atomically: fsync its bytes, rename over the final name, fsync the
// directory. A file is never seen under its final name half-written.
#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace attnscan {
void fsync_path(const std::filesystem::path& path);
void durable_rename(const std::filesystem::path& from, const std::filesystem::path& to);
// pwrite all of [data, data + n) at offset; `path` names the file in errors.
void write_all_at(int fd, const uint8_t* data, std::size_t n, uint64_t offset, const std::filesystem::path& path);
// pread all of [data, data + n) from offset; false when the file ends first or the read fails.
bool read_all_at(int fd, uint8_t* data, std::size_t n, uint64_t offset);
}  // namespace attnscan
