#pragma once
// Keeps a file's dirty pages on their way to disk while a run writes it: every `period` a thread of its
// own starts their writeback (sync_file_range, which does not wait for it), so that a commit's
// fdatasync, the last one above all, finds little left to write. Advice only: the fdatasync that makes
// a block durable still reports any error.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace attnscan {

class BackgroundWriteback {
 public:
  // `fd` must stay open until this is destroyed.
  BackgroundWriteback(int fd, std::chrono::milliseconds period);
  ~BackgroundWriteback();
  BackgroundWriteback(const BackgroundWriteback&) = delete;
  BackgroundWriteback& operator=(const BackgroundWriteback&) = delete;

 private:
  void loop();

  const int fd_;
  const std::chrono::milliseconds period_;
  std::mutex mutex_;
  std::condition_variable stop_changed_;
  bool stop_ = false;
  std::thread thread_;  // last: it starts once the members it uses exist
};

}  // namespace attnscan
