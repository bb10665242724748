#pragma once
// Runs the detectors of a run on batches of examples, either in this process or isolated in worker
// processes (the default). Isolated, a detector that crashes, calls exit() or runs past the timeout
// on one example ends the run with an error naming the detector and the example, never the run
// itself; and a stop request (SIGINT/SIGTERM) is honoured within seconds whatever a detector does.
//
// The workers are forked when the runner is constructed: construct it before any thread that may hold
// a lock is started (cli::StopSignals' thread holds none) and before any output file is opened (a
// worker holds only the loaded plugins). Each worker owns a
// shared memory region (examples in, scores out) and two pipes (requests in, replies out).
#include <atomic>
#include <memory>
#include <vector>

#include "plugin_host/plugin_host.hpp"

namespace attnscan {

// A stop request arrived while a detector was still running; the detector was ended. Nothing of
// the batch is kept, so the caller treats it as an interruption.
class DetectorsStopped : public Error {
 public:
  using Error::Error;
};

struct DetectorRunOptions {
  bool isolated = true;
  int workers = 1;          // batches scored at once (one worker process each)
  double timeout_s = 60;    // longest one detector may take on one example (isolated only; 0: no limit)
  double stop_grace_s = 2;  // how long a running detector may go on after a stop request
  const std::atomic<bool>* stop = nullptr;
};

class DetectorRunner {
 public:
  DetectorRunner(const std::vector<LoadedDetector>& detectors, const DetectorRunOptions& options);
  ~DetectorRunner();
  DetectorRunner(const DetectorRunner&) = delete;
  DetectorRunner& operator=(const DetectorRunner&) = delete;

  const std::vector<LoadedDetector>& detectors() const { return detectors_; }
  // Every detector's scores of every example: result[d][k] for detector d and batch[k], checked for
  // shape and values (LoadedDetector::score). Throws PluginError naming the detector and example on
  // any fault, DetectorsStopped when a stop request ended a detector. Safe to call concurrently.
  // `mixing`: the encoder's maps per example (or empty), for detectors with such a map. `strides`
  // (isolated() only): each example's attention as blocks of a padded batch (encode_batch).
  std::vector<std::vector<sdk::ExampleScores>> score(const std::vector<sdk::Example>& batch,
                                                     const std::vector<MixingMaps>& mixing = {},
                                                     const std::vector<int64_t>& strides = {}) const;
  // Whether the detectors run in worker processes (which take attention in padded blocks).
  bool isolated() const { return pool_ != nullptr; }

 private:
  class Worker;
  class Pool;
  const std::vector<LoadedDetector>& detectors_;
  DetectorRunOptions options_;
  std::unique_ptr<Pool> pool_;  // null when not isolated
};

}  // namespace attnscan
