#pragma once
// Exclusive use of one output: OUT.h5.lock, held (flock) by the run or merge that writes OUT.h5,
// OUT.h5.tmp and OUT.h5.parts. The kernel releases it when the holder exits in any way (SIGKILL
// included), so a stale lock file never blocks a rerun.
#include <filesystem>
#include <string>

namespace attnscan {

class OutputLock {
 public:
  // Takes the lock or throws an Error naming the process (pid, host, command, since when) holding it.
  explicit OutputLock(const std::filesystem::path& output, const std::string& what);
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  ~OutputLock();
  static std::filesystem::path path_for(const std::filesystem::path& output);
  // Who holds the lock of `output` ("pid 12 on host h, attnscan run, since ..."), or "" when nobody does;
  // creates nothing (a reader's folder may be read-only).
  static std::string holder(const std::filesystem::path& output);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace attnscan
