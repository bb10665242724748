#include "common/periodic_thread.hpp"

namespace attnscan {

PeriodicThread::PeriodicThread(std::chrono::milliseconds period, std::function<void()> tick)
    : period_(period), tick_(std::move(tick)), thread_([this] { loop(); }) {}

void PeriodicThread::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeriodicThread::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_changed_.wait_for(lock, period_, [&] { return stop_; })) {
    lock.unlock();
    tick_();
    lock.lock();
  }
}

}  // namespace attnscan
