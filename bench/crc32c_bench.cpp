// The checksum of stored attention (store/crc32c.hpp), each body the CPU has, as a run and `attnscan verify`
// call it: spans of 128 KiB (kChecksumSpan float16 values), from the L2 cache and from memory.
//   crc32c_bench [--reps 20]
// Prints, per body, GB/s over one 128 KiB span read again and again (in cache) and over 512 MiB of
// spans one after another (from memory), the best of --reps, and the sum of the spans' checksums (the
// same for every body).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "store/crc32c.hpp"

namespace {

using namespace attnscan;

constexpr std::size_t kSpanBytes = std::size_t{128} << 10;

// Best GB/s over the repetitions of checksumming `total` bytes of `bytes` span by span (wrapping round).
double gb_per_s(Crc32cBody body, const std::vector<uint8_t>& bytes, std::size_t total, int reps, uint32_t& crc) {
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    uint32_t all = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t done = 0; done < total; done += kSpanBytes)
      all += crc32c_with(body, bytes.data() + done % bytes.size(), kSpanBytes);  // each span counts
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(total) / s / 1e9);
    crc = all;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--reps" && i + 1 < argc && std::atoi(argv[i + 1]) > 0) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: crc32c_bench [--reps 20]\n");
      return 2;
    }
  }
  std::vector<uint8_t> hot(kSpanBytes), cold(std::size_t{512} << 20);
  uint32_t x = 1;
  for (auto& b : cold) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 24);
  std::memcpy(hot.data(), cold.data(), hot.size());
  const char* names[] = {"portable", "crc32 instruction", "folding, AVX2", "folding, AVX-512"};
  std::printf("%-20s %14s %16s  %s\n", "body", "in cache GB/s", "from memory GB/s", "checksum");
  for (Crc32cBody body : kCrc32cBodies) {
    const char* name = names[static_cast<int>(body)];
    if (!crc32c_has(body)) {
      std::printf("%-20s not on this CPU\n", name);
      continue;
    }
    uint32_t crc_hot = 0, crc_cold = 0;
    const double in_cache = gb_per_s(body, hot, 256 * kSpanBytes, reps, crc_hot);
    const double from_memory = gb_per_s(body, cold, cold.size(), std::max(1, reps / 5), crc_cold);
    std::printf("%-20s %14.2f %16.2f  %08x %08x\n", name, in_cache, from_memory, crc_hot, crc_cold);
  }
  return 0;
}
