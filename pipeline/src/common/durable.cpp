#include "common/durable.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"

namespace attnscan {

void fsync_path(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path.string() + ": cannot open to sync: " + std::strerror(errno));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw Error(path.string() + ": fsync failed: " + std::strerror(errno));
}

void durable_rename(const std::filesystem::path& from, const std::filesystem::path& to) {
  fsync_path(from);
  std::error_code ec;
  std::filesystem::rename(from, to, ec);
  if (ec) throw Error(from.string() + ": cannot rename to " + to.string() + ": " + ec.message());
  auto dir = to.parent_path().empty() ? std::filesystem::path(".") : to.parent_path();
  fsync_path(dir);
}

void write_all_at(int fd, const uint8_t* data, std::size_t n, uint64_t offset, const std::filesystem::path& path) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(path.string() + ": write failed: " + std::strerror(errno));
    }
    data += w;
    n -= static_cast<std::size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
}

bool read_all_at(int fd, uint8_t* data, std::size_t n, uint64_t offset) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, data, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    data += r;
    n -= static_cast<std::size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return true;
}

}  // namespace attnscan
