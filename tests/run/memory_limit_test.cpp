// The address-space guard of `attnscan run` (run/memory_limit): a run that cannot fit is refused up
// front, and one stuck at the limit is ended with the error instead of spinning.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "common/error.hpp"
#include "run/memory_limit.hpp"

using namespace attnscan;

namespace {

// Sets the soft RLIMIT_AS to what is mapped now plus `headroom` bytes (in a death-test child only).
void limit_to(uint64_t headroom) {
  rlimit r{};
  getrlimit(RLIMIT_AS, &r);
  r.rlim_cur = address_space_used() + headroom;
  setrlimit(RLIMIT_AS, &r);
}

}  // namespace

TEST(MemoryLimit, UnlimitedNeedsNoCheck) {
  rlimit r{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &r), 0);
  if (r.rlim_cur != RLIM_INFINITY) GTEST_SKIP() << "this test runs without ulimit -v";
  EXPECT_FALSE(address_space_limit().has_value());
  EXPECT_NO_THROW(require_address_space(uint64_t(1) << 50, "advice"));
  EXPECT_GT(address_space_used(), 0u);
}

TEST(MemoryLimitDeathTest, TooLittleRoomIsRefusedNamingTheSettings) {
  EXPECT_EXIT(
      {
        limit_to(64 << 20);
        try {
          require_address_space(256 << 20, memory_settings_advice(768, 4, 2));
        } catch (const Error& e) {
          std::cerr << e.what();
          std::exit(3);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(3),
      "out of memory: the address-space limit \\(ulimit -v\\) is [0-9]+ MiB, [0-9]+ MiB are mapped .* needs about 256 "
      "MiB more .*lower engine.threads \\(now 4\\) or pipeline.inflight \\(now 2\\).*pipeline.batch_tokens \\(now 768");
  EXPECT_EXIT(
      {
        limit_to(512 << 20);
        require_address_space(256 << 20, "advice");
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(MemoryLimitDeathTest, StuckAtTheLimitEndsTheProcessWithTheError) {
  // Within one OpenBLAS buffer of the limit and no batch finishing: ended after stuck_s.
  EXPECT_EXIT(
      {
        limit_to(kBlasBufferBytes / 2);
        std::atomic<uint64_t> beats{0};
        AddressSpaceWatch watch(beats, "lower engine.threads", std::cerr, 1.0);
        std::this_thread::sleep_for(std::chrono::seconds(10));
        std::exit(0);  // not reached: the watch ends the process first
      },
      ::testing::ExitedWithCode(1), "out of memory: .* no batch has finished for 1 s .*: lower engine.threads");
  // Batches that keep finishing are never ended, however close to the limit.
  EXPECT_EXIT(
      {
        limit_to(kBlasBufferBytes / 2);
        std::atomic<uint64_t> beats{0};
        AddressSpaceWatch watch(beats, "advice", std::cerr, 1.0);
        for (int i = 0; i < 30; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          beats += 1;
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}
