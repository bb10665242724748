#pragma once
// The address-space limit (ulimit -v, RLIMIT_AS) of a run. OpenBLAS retries a failed allocation of
// its work buffer forever (a 100% CPU spin, no error), so a run that cannot fit must be refused
// before it starts, and one that runs into the limit anyway must be ended with an error naming the
// settings to lower, never left spinning.
#include <atomic>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <thread>

namespace attnscan {

// The address space one OpenBLAS thread reserves for its work buffer (Debian's OpenBLAS 0.3.21:
// BUFFER_SIZE 128 MiB plus a page), allocated the first time it computes.
inline constexpr uint64_t kBlasBufferBytes = (uint64_t(128) << 20) + 4096;

// The soft RLIMIT_AS in bytes, or nothing when unlimited.
std::optional<uint64_t> address_space_limit();
// This process's mapped address space now (VmSize), in bytes.
uint64_t address_space_used();

// What to lower, for the messages: the current values of the settings that size a run's memory.
std::string memory_settings_advice(int64_t batch_tokens, int threads, int inflight);

// Throws Error when the limit leaves less than `more_bytes` beyond what is mapped now.
void require_address_space(uint64_t more_bytes, const std::string& advice);

// Watches a running job: when the mapped address space stays within one OpenBLAS buffer of the
// limit while `beats` does not move for `stuck_s` seconds, writes `message` (with the numbers) to
// `log` and ends the process with status 1 (committed blocks are durable; a rerun resumes).
class AddressSpaceWatch {
 public:
  AddressSpaceWatch(const std::atomic<uint64_t>& beats, std::string message, std::ostream& log, double stuck_s = 20);
  ~AddressSpaceWatch();
  AddressSpaceWatch(const AddressSpaceWatch&) = delete;
  AddressSpaceWatch& operator=(const AddressSpaceWatch&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace attnscan
