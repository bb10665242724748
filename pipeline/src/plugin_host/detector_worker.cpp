#include "plugin_host/detector_worker.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <iterator>
#include <string>
#include <vector>

#include "plugin_host/example_wire.hpp"
#include "plugin_host/worker_protocol.hpp"

namespace attnscan::worker {

namespace {

Progress* g_worker_progress = nullptr;

// A detector that calls exit() ends the worker here, first among the exit handlers (registered
// last): nothing the host registered (output files, buffers) runs in the worker.
void on_worker_exit(int status, void*) {
  if (g_worker_progress) {
    g_worker_progress->exit_status.store(status);
    g_worker_progress->exit_called.store(1);
  }
  ::_exit(status);
}

}  // namespace

[[noreturn]] void worker_main(const std::vector<LoadedDetector>& detectors, pid_t host, int request_fd, int reply_fd,
                              int memory_fd) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the host
  if (::getppid() != host) ::_exit(0);
  for (int sig : {SIGINT, SIGTERM, SIGUSR1, SIGHUP}) ::signal(sig, SIG_IGN);  // the host decides when to stop
  // A detector's fault ends the worker with its own signal, whatever handlers the host installed
  // (a sanitizer's, a crash reporter's), so the host reports exactly what the detector did.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
  // The worker holds nothing of the host's but its own pipes and memory: no output file, no lock.
  int keep[] = {request_fd, reply_fd, memory_fd};
  std::sort(std::begin(keep), std::end(keep));
  unsigned first = 3;
  for (int fd : keep) {
    if (static_cast<unsigned>(fd) > first) ::close_range(first, static_cast<unsigned>(fd) - 1, 0);
    first = static_cast<unsigned>(fd) + 1;
  }
  ::close_range(first, ~0U, 0);
  uint8_t* map = nullptr;
  std::size_t map_bytes = 0;
  ::on_exit(on_worker_exit, nullptr);
  for (;;) {
    Request req;
    if (!read_all(request_fd, &req, sizeof req)) ::_exit(0);  // the host closed: done
    if (req.map_bytes != map_bytes) {
      if (map) ::munmap(map, map_bytes);
      void* m = ::mmap(nullptr, req.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memory_fd, 0);
      if (m == MAP_FAILED) ::_exit(111);
      map = static_cast<uint8_t*>(m);
      map_bytes = req.map_bytes;
      g_worker_progress = reinterpret_cast<Progress*>(map);
    }
    auto* progress = reinterpret_cast<Progress*>(map);
    std::string error;
    try {
      const auto examples = decode_batch(map + kHeaderBytes, req.examples);
      // Results go detector by detector (each one's examples in order); the detectors run example by
      // example, so that every detector reads an example's maps while they are in this core's cache.
      std::vector<float*> results(detectors.size() * examples.size());
      auto* next = reinterpret_cast<float*>(map + req.result_offset);
      for (std::size_t d = 0; d < detectors.size(); ++d)
        for (std::size_t k = 0; k < examples.size(); ++k) {
          results[d * examples.size() + k] = next;
          next += result_floats(detectors[d], examples[k].example[0]);
        }
      for (std::size_t k = 0; k < examples.size(); ++k)
        for (std::size_t d = 0; d < detectors.size(); ++d) {
          progress->detector.store(static_cast<int32_t>(d));
          progress->example.store(static_cast<int32_t>(k));
          progress->heartbeat.fetch_add(1);
          const auto scores = detectors[d].score(examples[k].example, examples[k].mixing);  // shape and values checked
          float* out = std::copy(scores[0].scores.begin(), scores[0].scores.end(), results[d * examples.size() + k]);
          std::copy(scores[0].baseline.begin(), scores[0].baseline.end(), out);
        }
    } catch (const std::exception& e) {
      error = e.what();
    }
    progress->heartbeat.fetch_add(1);
    std::string reply(1, static_cast<char>(error.empty() ? kReplyOk : kReplyError));
    if (!error.empty()) {
      error.resize(std::min(error.size(), kMaxMessage));
      const auto n = static_cast<uint32_t>(error.size());
      reply.append(reinterpret_cast<const char*>(&n), sizeof n);
      reply += error;
    }
    if (!write_all(reply_fd, reply.data(), reply.size())) ::_exit(0);
  }
}

}  // namespace attnscan::worker
