// The writeback a run keeps going on OUT.h5.tmp (store/background_writeback): the pages written go to
// disk without a sync, and the thread stops when the writer is done.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "common/unique_fd.hpp"
#include "store/background_writeback.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;
using namespace std::chrono_literals;

namespace {

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

// The file's dirty pages (cachestat, Linux 6.5), or -1 where the kernel has no cachestat.
int64_t dirty_pages(int fd) {
  struct {
    uint64_t off, len;
  } range{0, 0};  // the whole file
  struct {
    uint64_t cache, dirty, writeback, evicted, recently_evicted;
  } stat{};
  if (::syscall(__NR_cachestat, fd, &range, &stat, 0) != 0) return -1;
  return static_cast<int64_t>(stat.dirty);
}

}  // namespace

TEST(BackgroundWriteback, WrittenPagesGoToDiskWithoutASync) {
  const auto path = test::scratch_dir("background_writeback") / "values";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd);
  if (dirty_pages(fd.get()) < 0) GTEST_SKIP() << "this kernel has no cachestat (Linux 6.5): dirty pages cannot be counted";
  BackgroundWriteback writeback(fd.get(), 10ms);
  const std::vector<char> chunk(1 << 20, 'x');
  for (int i = 0; i < 32; ++i) ASSERT_EQ(::write(fd.get(), chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
  // Unasked, the kernel leaves them dirty for 30 s (vm.dirty_expire_centisecs) below its dirty ratios.
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (dirty_pages(fd.get()) > 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(dirty_pages(fd.get()), 0);
}

TEST(BackgroundWriteback, StopsAtOnceWhenDestroyed) {
  const auto path = test::scratch_dir("background_writeback_stop") / "values";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd);
  const auto start = std::chrono::steady_clock::now();
  { BackgroundWriteback writeback(fd.get(), std::chrono::hours(1)); }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}
