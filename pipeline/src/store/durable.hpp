#pragma once
// Making a finished file visible atomically: fsync its bytes, rename over the final name, fsync the
// directory. A file is never seen under its final name half-written.
#include <filesystem>

namespace attnscan {
void fsync_path(const std::filesystem::path& path);
void durable_rename(const std::filesystem::path& from, const std::filesystem::path& to);
}  // namespace attnscan
