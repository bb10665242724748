#pragma once
// Stop requests (SIGINT, SIGTERM, SIGUSR1) for `attnscan run`, taken by one thread of their own.
#include <signal.h>

#include <atomic>
#include <thread>

namespace attnscan::cli {

// Blocks the stop signals in the calling thread, and so in every thread it starts later, and waits for them
// on a thread of its own. A compute thread is never interrupted: a handler run on a thread inside oneDNN's
// AVX2 kernels corrupted the heap (1 to 3 runs in 8 stopped by SIGINT aborted in free()). Construct it in
// the main thread before any other thread starts; one at a time.
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
