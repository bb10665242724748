#include "store/background_writeback.hpp"

#include <fcntl.h>

namespace attnscan {

BackgroundWriteback::BackgroundWriteback(int fd, std::chrono::milliseconds period)
    : fd_(fd), period_(period), thread_([this] { loop(); }) {}

BackgroundWriteback::~BackgroundWriteback() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_changed_.notify_all();
  thread_.join();
}

void BackgroundWriteback::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_changed_.wait_for(lock, period_, [&] { return stop_; })) {
    lock.unlock();
    ::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);  // the whole file; errors reach the fdatasync
    lock.lock();
  }
}

}  // namespace attnscan
