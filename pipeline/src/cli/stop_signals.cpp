#include "cli/stop_signals.hpp"

#include <pthread.h>

#include <initializer_list>

namespace attnscan::cli {

namespace {

std::atomic<bool> g_requested{false};
// Runs only on a thread that a library started before the mask (at load): the others block the signals.
// Async-signal-safe: one lock-free store.
extern "C" void on_stop_signal(int) { g_requested.store(true); }

}  // namespace

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  for (int sig : {SIGINT, SIGTERM, SIGUSR1}) sigaddset(&signals_, sig);  // SIGUSR1: SLURM's warning (--signal=USR1@T)
  g_requested.store(false);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);  // first: from here on the handler never runs on this thread
  // A handler rather than the inherited disposition, which a shell sets to "ignore" for a background job.
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGUSR1}) sigaction(sig, &sa, nullptr);
  waiter_ = std::thread([this] {
    for (;;) {
      int sig = 0;
      if (sigwait(&signals_, &sig) != 0) continue;
      if (closing_.load()) return;
      g_requested.store(true);
    }
  });
}

StopSignals::~StopSignals() {
  closing_.store(true);
  pthread_kill(waiter_.native_handle(), SIGUSR1);  // wakes sigwait, which then sees closing_
  waiter_.join();
  // The signals stay blocked: one that arrives from now on stays pending until the process exits.
}

const std::atomic<bool>& StopSignals::requested() const { return g_requested; }

}  // namespace attnscan::cli
