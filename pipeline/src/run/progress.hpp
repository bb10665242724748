#pragma once
// Progress reporting of a run: a live bar on a terminal, a log line every few seconds otherwise.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <thread>

#include "run/pipeline.hpp"

namespace attnscan {

class ProgressReporter {
 public:
  ProgressReporter(const PipelineProgress& progress, std::ostream& out);
  ~ProgressReporter();  // stops the thread and ends the bar line

 private:
  void loop();
  void report(bool final_line);
  const PipelineProgress& progress_;
  std::ostream& out_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace attnscan
