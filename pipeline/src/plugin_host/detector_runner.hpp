#pragma once
// Runs the detectors of a run on batches of examples, each either in this process or isolated in worker
// processes (by default those from plugin folders; attnscan's own detectors run in this process). Isolated,
// a detector that crashes, calls exit() or runs past the timeout on one example ends the run with an error
// naming the detector and the example, never the run itself; and a stop request (SIGINT/SIGTERM) is
// honoured within seconds whatever a detector does.
//
// The workers are forked when the runner is constructed: construct it before any thread that may hold
// a lock is started (cli::StopSignals' thread holds none) and before any output file is opened (a
// worker holds only the loaded plugins). Each worker owns a
// shared memory region (examples in, scores out) and two pipes (requests in, replies out).
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "plugin_host/plugin_host.hpp"

namespace attnscan {

// A stop request arrived while a detector was still running; the detector was ended. Nothing of
// the batch is kept, so the caller treats it as an interruption.
class DetectorsStopped : public Error {
 public:
  using Error::Error;
};

// Which detectors run in worker processes (pipeline.detector_isolation): those not shipped with attnscan
// (LoadedDetector::shipped; attnscan's own, tested and fuzzed with it, run in this process, sparing each
// batch's copy into shared memory and its round trip), every one, or none.
enum class DetectorIsolation { Plugins, All, None };
// The option's value: plugins, all (or true), none (or false). Throws Error on anything else.
DetectorIsolation detector_isolation_named(const std::string& value);

struct DetectorRunOptions {
  DetectorIsolation isolation = DetectorIsolation::Plugins;
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
  // Whether some detectors run in this process: they take attention as contiguous n x n blocks (the
  // worker processes take the padded blocks as they are).
  bool scores_in_process() const { return !local_.empty(); }
  // Whether detectors_[i] runs in a worker process.
  bool isolates(std::size_t i) const;

 private:
  class Worker;
  class Pool;
  const std::vector<LoadedDetector>& detectors_;
  DetectorRunOptions options_;
  std::vector<std::size_t> local_, isolated_;        // indices into detectors_, in order
  std::vector<LoadedDetector> isolated_detectors_;  // detectors_[isolated_], what the workers hold
  std::unique_ptr<Pool> pool_;                      // null when none is isolated
};

}  // namespace attnscan
