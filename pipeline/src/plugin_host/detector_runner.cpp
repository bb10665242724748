#include "plugin_host/detector_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>

#include "plugin_host/detector_worker.hpp"
#include "plugin_host/example_wire.hpp"
#include "plugin_host/worker_protocol.hpp"

namespace attnscan {

using namespace worker;

namespace {

using Clock = std::chrono::steady_clock;

std::string signal_text(int sig) {
  const char* name = ::strsignal(sig);
  return "signal " + std::to_string(sig) + (name ? std::string(", ") + name : std::string());
}

}  // namespace

// --- the host side: one worker process ------------------------------------------------------------

class DetectorRunner::Worker {
 public:
  Worker(const std::vector<LoadedDetector>& detectors, const DetectorRunOptions& options)
      : detectors_(detectors), options_(options) {
    int req[2], rep[2];
    memory_fd_ = ::memfd_create("attnscan-detectors", MFD_CLOEXEC);
    if (memory_fd_ < 0 || ::pipe2(req, O_CLOEXEC) != 0 || ::pipe2(rep, O_CLOEXEC) != 0)
      throw Error(std::string("cannot start a detector worker process: ") + std::strerror(errno) +
                  " (set pipeline.detector_isolation: false to run detectors in the main process)");
    grow(kHeaderBytes + 4096);
    std::fflush(nullptr);  // nothing buffered is written twice
    const pid_t host = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0)
      throw Error(std::string("cannot start a detector worker process: ") + std::strerror(errno) +
                  " (set pipeline.detector_isolation: false to run detectors in the main process)");
    if (pid_ == 0) {
      ::close(req[1]);
      ::close(rep[0]);
      worker_main(detectors_, host, req[0], rep[1], memory_fd_);
    }
    ::close(req[0]);
    ::close(rep[1]);
    request_fd_ = req[1];
    reply_fd_ = rep[0];
  }

  ~Worker() {
    if (request_fd_ >= 0) ::close(request_fd_);  // the worker reads end of input and leaves
    if (reply_fd_ >= 0) ::close(reply_fd_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);  // a detector may be stuck: do not wait for it
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    if (map_) ::munmap(map_, map_bytes_);
    if (memory_fd_ >= 0) ::close(memory_fd_);
  }

  std::vector<std::vector<sdk::ExampleScores>> score(const std::vector<sdk::Example>& batch,
                                                     const std::vector<MixingMaps>& mixing,
                                                     const std::vector<int64_t>& strides) {
    if (pid_ <= 0) throw PluginError("the detector worker process has ended after an earlier fault");
    const std::size_t result_offset = align8(kHeaderBytes + encoded_size(batch, mixing));
    std::size_t floats = 0;
    for (const auto& d : detectors_)
      for (const auto& e : batch) floats += result_floats(d, e);
    grow(result_offset + floats * sizeof(float));
    encode_batch(map_ + kHeaderBytes, batch, mixing, strides);

    Request req{map_bytes_, result_offset, batch.size()};
    const uint64_t start = progress()->heartbeat.load();
    if (!write_all(request_fd_, &req, sizeof req)) fail(batch, "");
    wait_reply(batch, start);

    std::vector<std::vector<sdk::ExampleScores>> out(detectors_.size(), std::vector<sdk::ExampleScores>(batch.size()));
    const float* r = reinterpret_cast<const float*>(map_ + result_offset);
    for (std::size_t d = 0; d < detectors_.size(); ++d)
      for (std::size_t k = 0; k < batch.size(); ++k) {
        const std::size_t outputs = detectors_[d].info.outputs.size();
        const std::size_t n = outputs * static_cast<std::size_t>(batch[k].layers * batch[k].heads),
                          baselines = outputs * static_cast<std::size_t>(batch[k].layers);
        out[d][k].scores.assign(r, r + n);
        out[d][k].baseline.assign(r + n, r + n + baselines);
        r += n + baselines;
      }
    return out;
  }

 private:
  Progress* progress() const { return reinterpret_cast<Progress*>(map_); }

  // The region holds at least `bytes`; it only grows (the worker remaps on its next request).
  void grow(std::size_t bytes) {
    if (bytes <= map_bytes_) return;
    const std::size_t size = std::max(bytes, map_bytes_ * 3 / 2);
    if (::ftruncate(memory_fd_, static_cast<off_t>(size)) != 0)
      throw Error(std::string("detector worker: cannot size its shared memory to ") + std::to_string(size) +
                  " bytes: " + std::strerror(errno));
    void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, memory_fd_, 0);
    if (m == MAP_FAILED)
      throw Error(std::string("detector worker: cannot map ") + std::to_string(size) + " bytes: " + std::strerror(errno));
    if (map_) ::munmap(map_, map_bytes_);
    map_ = static_cast<uint8_t*>(m);
    map_bytes_ = size;
  }

  std::string where(const std::vector<sdk::Example>& batch) const {
    const auto d = static_cast<std::size_t>(progress()->detector.load());
    const auto k = static_cast<std::size_t>(progress()->example.load());
    return "detector " + (d < detectors_.size() ? detectors_[d].info.name : std::string("?")) + " on example " +
           (k < batch.size() ? batch[k].id : std::string("?"));
  }

  // Ends the worker and says what happened to it; `what` empty: it had ended by itself.
  [[noreturn]] void fail(const std::vector<sdk::Example>& batch, const std::string& what) {
    const std::string at = where(batch);
    if (!what.empty()) ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    if (!what.empty()) throw PluginError(at + ": " + what);
    if (progress()->exit_called.load())
      throw PluginError(at + ": the detector called exit(" + std::to_string(progress()->exit_status.load()) +
                        ") (a detector returns scores or throws; it must not end the process)");
    if (WIFSIGNALED(status))
      throw PluginError(at + ": the detector crashed (" + signal_text(WTERMSIG(status)) + ")");
    throw PluginError(at + ": the detector's worker process ended unexpectedly (exit status " +
                      std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }

  void wait_reply(const std::vector<sdk::Example>& batch, uint64_t heartbeat) {
    auto last_change = Clock::now();
    std::optional<Clock::time_point> stop_seen;
    for (;;) {
      pollfd p{reply_fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, 100);
      if (ready > 0) break;
      if (ready < 0 && errno != EINTR) fail(batch, std::string("cannot wait for the detector: ") + std::strerror(errno));
      const auto now = Clock::now();
      if (options_.stop && options_.stop->load()) {
        if (!stop_seen) stop_seen = now;
        if (std::chrono::duration<double>(now - *stop_seen).count() >= options_.stop_grace_s) {
          const std::string at = where(batch);
          ::kill(pid_, SIGKILL);
          int status = 0;
          while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
          }
          pid_ = -1;
          throw DetectorsStopped("stopped: " + at + " was ended");
        }
      }
      const uint64_t beat = progress()->heartbeat.load();
      if (beat != heartbeat) {
        heartbeat = beat;
        last_change = now;
      } else if (options_.timeout_s > 0 && std::chrono::duration<double>(now - last_change).count() > options_.timeout_s) {
        std::ostringstream limit;
        limit << options_.timeout_s;
        fail(batch, "the detector did not finish within " + limit.str() +
                        " s (pipeline.detector_timeout; raise it if this detector is slow, not stuck)");
      }
    }
    uint8_t status = 0;
    if (!read_all(reply_fd_, &status, 1)) fail(batch, "");
    if (status == kReplyOk) return;
    uint32_t n = 0;
    std::string message(kMaxMessage, '\0');
    if (!read_all(reply_fd_, &n, sizeof n) || n > kMaxMessage || !read_all(reply_fd_, message.data(), n)) fail(batch, "");
    message.resize(n);
    throw PluginError(message);  // the detector threw or returned bad scores: the worker carries on
  }

  const std::vector<LoadedDetector>& detectors_;
  const DetectorRunOptions& options_;
  pid_t pid_ = -1;
  int request_fd_ = -1, reply_fd_ = -1, memory_fd_ = -1;
  uint8_t* map_ = nullptr;
  std::size_t map_bytes_ = 0;
};

// Workers handed out one batch at a time.
class DetectorRunner::Pool {
 public:
  Pool(const std::vector<LoadedDetector>& detectors, const DetectorRunOptions& options) {
    // A worker that died between two batches makes the next request's write fail with EPIPE (then
    // named by fail()); without this, SIGPIPE would end attnscan with no message at all.
    ::signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < std::max(1, options.workers); ++i) {
      workers_.push_back(std::make_unique<Worker>(detectors, options));
      free_.push_back(workers_.back().get());
    }
  }
  std::vector<std::vector<sdk::ExampleScores>> score(const std::vector<sdk::Example>& batch,
                                                     const std::vector<MixingMaps>& mixing,
                                                     const std::vector<int64_t>& strides) {
    Worker* w = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [&] { return !free_.empty(); });
      w = free_.back();
      free_.pop_back();
    }
    struct Return {
      Pool& pool;
      Worker* worker;
      ~Return() {
        {
          std::lock_guard<std::mutex> lock(pool.mutex_);
          pool.free_.push_back(worker);
        }
        pool.ready_.notify_one();
      }
    } give_back{*this, w};
    return w->score(batch, mixing, strides);
  }

 private:
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> free_;
  std::mutex mutex_;
  std::condition_variable ready_;
};

DetectorIsolation detector_isolation_named(const std::string& value) {
  if (value == "plugins") return DetectorIsolation::Plugins;
  if (value == "all" || value == "true") return DetectorIsolation::All;
  if (value == "none" || value == "false") return DetectorIsolation::None;
  throw Error("pipeline.detector_isolation: '" + value + "' (expected plugins, all or none)");
}

DetectorRunner::DetectorRunner(const std::vector<LoadedDetector>& detectors, const DetectorRunOptions& options)
    : detectors_(detectors), options_(options) {
  for (std::size_t i = 0; i < detectors_.size(); ++i) (isolates(i) ? isolated_ : local_).push_back(i);
  for (auto i : isolated_) isolated_detectors_.push_back(detectors_[i]);
  if (!isolated_.empty()) pool_ = std::make_unique<Pool>(isolated_detectors_, options_);
}

DetectorRunner::~DetectorRunner() = default;

bool DetectorRunner::isolates(std::size_t i) const {
  return options_.isolation == DetectorIsolation::All ||
         (options_.isolation == DetectorIsolation::Plugins && !detectors_[i].shipped);
}

std::vector<std::vector<sdk::ExampleScores>> DetectorRunner::score(const std::vector<sdk::Example>& batch,
                                                                   const std::vector<MixingMaps>& mixing,
                                                                   const std::vector<int64_t>& strides) const {
  if (!local_.empty())
    for (std::size_t k = 0; k < strides.size() && k < batch.size(); ++k)
      if (strides[k] > 0 && static_cast<std::size_t>(strides[k]) != batch[k].size())
        throw Error("internal: padded attention given to detectors that run in this process");
  std::vector<std::vector<sdk::ExampleScores>> out(detectors_.size());
  // Example by example, as the workers do: every detector here reads an example's maps while they are in
  // this core's cache (a batch's maps are several times its L2).
  for (auto i : local_) out[i].resize(batch.size());
  for (std::size_t k = 0; k < batch.size() && !local_.empty(); ++k) {
    const std::vector<sdk::Example> one{batch[k]};
    const std::vector<MixingMaps> one_mixing = k < mixing.size() ? std::vector<MixingMaps>{mixing[k]} : std::vector<MixingMaps>{};
    for (auto i : local_) out[i][k] = std::move(detectors_[i].score(one, one_mixing).front());
  }
  if (pool_) {
    auto isolated = pool_->score(batch, mixing, strides);
    for (std::size_t j = 0; j < isolated_.size(); ++j) out[isolated_[j]] = std::move(isolated[j]);
  }
  return out;
}

}  // namespace attnscan
