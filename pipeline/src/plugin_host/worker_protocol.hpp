#pragma once
// What the host and a detector worker process exchange: a shared memory region (a progress header,
// the batch's examples, then the scores) and, over two pipes, fixed-size requests and short replies.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace attnscan::worker {

// At the start of a worker's shared memory: what the worker is doing, for the host to name.
struct Progress {
  std::atomic<uint64_t> heartbeat;  // bumped as each (detector, example) starts
  std::atomic<int32_t> detector;
  std::atomic<int32_t> example;
  std::atomic<int32_t> exit_called;  // 1 when the worker's exit() ran (a detector called it)
  std::atomic<int32_t> exit_status;
};
constexpr std::size_t kHeaderBytes = 256;
static_assert(sizeof(Progress) <= kHeaderBytes, "progress header");

struct Request {
  uint64_t map_bytes = 0;      // size of the shared region (the worker remaps when it changes)
  uint64_t result_offset = 0;  // where the worker writes the scores
  uint64_t examples = 0;
};
constexpr uint8_t kReplyOk = 0, kReplyError = 1;
constexpr std::size_t kMaxMessage = 3000;  // one reply fits one atomic pipe write

inline bool write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

inline bool read_all(int fd, void* data, std::size_t n) {
  auto* p = static_cast<uint8_t*>(data);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace attnscan::worker
