#pragma once
// Keeps a file's dirty pages on their way to disk while a run writes it: every `period` a thread of its
// own starts their writeback (sync_file_range, which does not wait for it), so that a commit's
// fdatasync, the last one above all, finds little left to write. Advice only: the fdatasync that makes
// a block durable still reports any error.
#include <chrono>

#include "common/periodic_thread.hpp"

namespace attnscan {

class BackgroundWriteback {
 public:
  // `fd` must stay open until this is destroyed.
  BackgroundWriteback(int fd, std::chrono::milliseconds period);

 private:
  PeriodicThread thread_;
};

}  // namespace attnscan
