#pragma once
// Stop requests (SIGINT, SIGTERM, SIGUSR1) for `attnscan run`, taken by one thread of their own.
#include <signal.h>

#include <atomic>
#include <thread>

namespace attnscan::cli {

// Blocks the stop signals in the calling thread, and so in every thread it starts later, and waits for them
// on a thread of its own, so no compute thread is ever interrupted (one interrupted inside oneDNN's kernels
// corrupted the heap in 1 to 3 of 8 runs; e2e.sigint_stops_cleanly_and_refuses_changed_resume checks every
// thread's signal mask). Construct it in the main thread before any other
// thread starts; one at a time. Its thread holds no lock, so the detector workers may be forked after it.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  const std::atomic<bool>& requested() const;  // true once a stop signal arrived

 private:
  sigset_t signals_;
  std::atomic<bool> closing_{false};
  std::thread waiter_;
};

}  // namespace attnscan::cli
