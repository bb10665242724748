#pragma once
// A thread that calls `tick` every `period` until stopped; stopping wakes it at once, with no last tick.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace attnscan {

class PeriodicThread {
 public:
  PeriodicThread(std::chrono::milliseconds period, std::function<void()> tick);
  ~PeriodicThread() { stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Waits for a tick under way to end; none after it. Once is enough.
  void stop();

 private:
  void loop();

  const std::chrono::milliseconds period_;
  const std::function<void()> tick_;
  std::mutex mutex_;
  std::condition_variable stop_changed_;
  bool stop_ = false;
  std::thread thread_;  // last: it starts once the members it uses exist
};

}  // namespace attnscan
