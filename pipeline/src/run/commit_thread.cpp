#include "run/commit_thread.hpp"

#include <algorithm>

namespace attnscan {

CommitThread::CommitThread(std::size_t queued) : bound_(std::max<std::size_t>(1, queued)), thread_([this] { loop(); }) {}

CommitThread::~CommitThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void CommitThread::hand_over(Commit commit) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return failed_ || queue_.size() < bound_; });
  if (failed_) std::rethrow_exception(failed_);
  queue_.push_back(std::move(commit));
  changed_.notify_all();
}

void CommitThread::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return failed_ || (queue_.empty() && !busy_); });
  if (failed_) std::rethrow_exception(failed_);
}

void CommitThread::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return closing_ || !queue_.empty(); });
    if (queue_.empty()) return;  // closing, and nothing left to commit
    Commit commit = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    changed_.notify_all();  // its place in the queue is free
    std::exception_ptr error;
    try {
      commit();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    if (error) {
      failed_ = error;
      queue_.clear();  // later blocks must not commit past a hole
    }
    changed_.notify_all();
  }
}

}  // namespace attnscan
