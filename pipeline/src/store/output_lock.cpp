#include "store/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>

#include "common/error.hpp"

namespace attnscan {

namespace fs = std::filesystem;

fs::path OutputLock::path_for(const fs::path& output) { return fs::path(output.string() + ".lock"); }

namespace {

// The holder's line in a lock file ("pid 12 on host h, attnscan run, since ..."); "starting up" before
// the holder has written it.
std::string holder_line(const fs::path& lock_file) {
  std::ifstream in(lock_file);
  std::string h;
  std::getline(in, h);
  return h.empty() ? "starting up" : h;
}

}  // namespace

std::string OutputLock::holder(const fs::path& output) {
  const fs::path path = path_for(output);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held ? holder_line(path) : "";
}

OutputLock::OutputLock(const fs::path& output, const std::string& what) : path_(path_for(output)) {
  if (output.has_parent_path()) fs::create_directories(output.parent_path());
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(path_.string() + ": cannot create lock file: " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string h = holder_line(path_);
      ::close(fd_);
      fd_ = -1;
      if (err != EWOULDBLOCK) throw Error(path_.string() + ": cannot lock: " + std::strerror(err));
      throw Error(output.string() + " is in use by another attnscan process (" + h +
                  "); wait for it to finish or stop it, then rerun");
    }
    // The file may have been removed by the previous holder between our open and flock: then our
    // lock is on a dead inode; start over on the live one.
    struct stat mine {}, now {};
    if (::fstat(fd_, &mine) == 0 && ::stat(path_.c_str(), &now) == 0 && mine.st_ino == now.st_ino && mine.st_dev == now.st_dev)
      break;
    ::close(fd_);
  }
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  char since[32] = "";
  const std::time_t t = std::time(nullptr);
  std::strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  const std::string text = "pid " + std::to_string(::getpid()) + " on host " + host + ", " + what + ", since " + since + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    throw Error(path_.string() + ": cannot write lock file: " + std::strerror(errno));
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still holding the lock; a waiting process re-checks the inode
  ::close(fd_);
}

}  // namespace attnscan
