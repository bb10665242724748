#include "store/durable.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attnscan/error.hpp"

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

}  // namespace attnscan
