#include "run/memory_limit.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "common/error.hpp"

namespace attnscan {

namespace {

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::optional<uint64_t> address_space_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<uint64_t>(r.rlim_cur);
}

uint64_t address_space_used() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long pages = 0;
  const int got = std::fscanf(f, "%lu", &pages);
  std::fclose(f);
  return got == 1 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

std::string memory_settings_advice(int64_t batch_tokens, int threads, int inflight) {
  return "lower engine.threads (now " + std::to_string(threads) + ") or pipeline.inflight (now " +
         std::to_string(inflight) + "), which a rerun resumes with, or pipeline.batch_tokens (now " +
         std::to_string(batch_tokens) + "; start over with --overwrite), or raise the limit (ulimit -v)";
}

void require_address_space(uint64_t more_bytes, const std::string& advice) {
  const auto limit = address_space_limit();
  if (!limit) return;
  const uint64_t used = address_space_used();
  if (used + more_bytes <= *limit) return;
  throw Error("out of memory: the address-space limit (ulimit -v) is " + mib(*limit) + ", " + mib(used) +
              " are mapped after loading the model and this run needs about " + mib(more_bytes) +
              " more for its compute buffers and batches: " + advice);
}

AddressSpaceWatch::AddressSpaceWatch(const std::atomic<uint64_t>& beats, std::string message, std::ostream& log,
                                     double stuck_s) {
  const auto limit = address_space_limit();
  if (!limit) return;  // nothing to run into
  thread_ = std::thread([this, &beats, message = std::move(message), &log, stuck_s, limit = *limit] {
    using Clock = std::chrono::steady_clock;
    uint64_t last = beats.load();
    auto since = Clock::now();
    while (!done_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      const uint64_t now_beats = beats.load();
      const uint64_t used = address_space_used();
      const auto now = Clock::now();
      if (now_beats != last || used + kBlasBufferBytes < limit) {
        last = now_beats;
        since = now;
        continue;
      }
      if (std::chrono::duration<double>(now - since).count() < stuck_s) continue;
      std::ostringstream m;
      m << "attnscan run: error: out of memory: " << mib(used) << " of the address-space limit (ulimit -v) of "
        << mib(limit) << " are mapped and no batch has finished for " << stuck_s
        << " s (a compute library retries a failed allocation forever): " << message << "\n";
      log << m.str() << std::flush;
      ::_exit(1);  // the compute threads cannot be stopped; committed blocks are on disk already
    }
  });
}

AddressSpaceWatch::~AddressSpaceWatch() {
  done_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace attnscan
