#pragma once
// Progress reporting of a run: a live bar on a terminal, a log line every few seconds otherwise.
#include <atomic>
#include <chrono>
#include <ostream>

#include "common/periodic_thread.hpp"
#include "run/pipeline.hpp"

namespace attnscan {

class ProgressReporter {
 public:
  ProgressReporter(const PipelineProgress& progress, std::ostream& out);
  ~ProgressReporter();  // stops the thread and ends the bar line

 private:
  void report(bool final_line);
  const PipelineProgress& progress_;
  std::ostream& out_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
  PeriodicThread thread_;  // last: it reports through the members above
};

}  // namespace attnscan
