#include "run/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace attnscan {

namespace {

std::string duration(double s) {
  if (!(s >= 0) || s > 1e7) return "?";
  char buf[32];
  long t = static_cast<long>(s);
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  return buf;
}

}  // namespace

ProgressReporter::ProgressReporter(const PipelineProgress& p, std::ostream& out)
    : progress_(p), out_(out), tty_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()),
      thread_(tty_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(5000), [this] { report(false); }) {}

ProgressReporter::~ProgressReporter() {
  thread_.stop();
  if (tty_) out_ << "\n";
}

void ProgressReporter::report(bool) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double pairs = static_cast<double>(progress_.examples.load()), tokens = static_cast<double>(progress_.tokens.load());
  const double f = progress_.fraction.load();
  const double eta = f > 0.001 ? s * (1.0 - f) / f : -1;
  char buf[256];
  if (tty_) {
    const int width = 30, filled = static_cast<int>(f * width);
    std::string bar(static_cast<std::size_t>(std::max(0, std::min(width, filled))), '#');
    bar.resize(width, '.');
    std::snprintf(buf, sizeof buf, "\r[%s] %5.1f%% %.0f pairs  %.1f pairs/s  %.0f tok/s  ETA %s   ", bar.c_str(),
                  100 * f, pairs, pairs / s, tokens / s, duration(eta).c_str());
  } else {
    std::snprintf(buf, sizeof buf, "progress: %.1f%% of input, %.0f pairs, %.1f pairs/s, %.0f tokens/s, elapsed %s, ETA %s\n",
                  100 * f, pairs, pairs / s, tokens / s, duration(s).c_str(), duration(eta).c_str());
  }
  out_ << buf << std::flush;
}

}  // namespace attnscan
