#pragma once
// SHA-256 digests of large input files (model weights, datasets), remembered between runs.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace attnscan {

// sha256_file(path), remembered in cache_dir()/digests: one entry per absolute path, holding the digest and
// the identity of the file it was computed from (inode, size, and modification and change times to the
// nanosecond). A rerun then skips reading hundreds of MB of weights again; any change to the file moves its
// change time and misses the entry. The file is opened once: its identity and its bytes come from that one
// descriptor (on NFS, opening refreshes the attributes). Remembered only for a file unchanged for `settled`
// before it was read and while it was read (within the clock's granularity a rewrite of the same size could
// keep both times), that age judged by the file system's clock, not this machine's. A cache that cannot be
// read or written is passed over.
std::string remembered_sha256_file(const std::filesystem::path& path,
                                   std::chrono::nanoseconds settled = std::chrono::seconds(2));

namespace detail {
// Removes the pending entries in `dir` (left by a process killed between making and publishing one) made over
// a day before `now_ns` by the file system's clock, so that no live process loses its own. Run on each miss.
void remove_abandoned_pending(const std::filesystem::path& dir, int64_t now_ns);
}  // namespace detail

}  // namespace attnscan
