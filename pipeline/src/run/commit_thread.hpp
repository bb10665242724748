#pragma once
// The commits of a run's blocks, in the order they are handed over, on a thread of their own. A commit
// waits for the disk (fdatasync, the writeback it throttles); on a compute stream that wait left a core
// idle at each round of blocks.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace attnscan {

class CommitThread {
 public:
  using Commit = std::function<void()>;
  // hand_over waits while `queued` commits wait for the thread (at least 1).
  explicit CommitThread(std::size_t queued);
  // Runs the commits handed over, unless one failed, then stops: on an error elsewhere, the blocks
  // that were complete still commit.
  ~CommitThread();
  CommitThread(const CommitThread&) = delete;
  CommitThread& operator=(const CommitThread&) = delete;

  // Queues a commit. Rethrows the error of one that failed; none after that one runs.
  void hand_over(Commit commit);
  // Waits until every commit handed over has run; rethrows a failure as hand_over does.
  void drain();

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Commit> queue_;
  const std::size_t bound_;
  bool busy_ = false, closing_ = false;
  std::exception_ptr failed_;
  std::thread thread_;  // last: it starts once the members it uses exist
};

}  // namespace attnscan
