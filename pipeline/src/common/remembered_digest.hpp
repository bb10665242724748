#pragma once
// SHA-256 digests of large input files (model weights, datasets), remembered between runs.
#include <filesystem>
#include <string>

namespace attnscan {

// sha256_file(path), remembered in cache_dir()/digests under the file's identity: its absolute path, device,
// inode, size, and modification and change times to the nanosecond. A rerun then skips reading hundreds of
// MB of weights again, and any change to the file (which moves its change time) misses the entry.
// Remembered only for a file unchanged in the 2 s before it was read and while it was read: within the
// clock's granularity a rewrite of the same size could keep both times. A cache that cannot be read or
// written is passed over.
std::string remembered_sha256_file(const std::filesystem::path& path);

}  // namespace attnscan
