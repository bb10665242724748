#include "common/for_each_index.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace attnscan;

TEST(ForEachIndex, RunsEveryTaskOnce) {
  for (int threads : {0, 1, 2, 7}) {
    std::vector<std::atomic<int>> calls(100);
    for_each_index(100, threads, [&](int64_t i) { calls[static_cast<std::size_t>(i)]++; });
    for (std::size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i].load(), 1) << "task " << i << ", " << threads << " threads";
  }
  bool called = false;
  for_each_index(0, 4, [&](int64_t) { called = true; });
  EXPECT_FALSE(called);
}

// Task 0 waits for task 1 to start: only two threads at once can finish it in time.
TEST(ForEachIndex, RunsTasksSideBySide) {
  std::atomic<bool> second_started{false};
  bool first_saw_it = false;
  for_each_index(2, 2, [&](int64_t i) {
    if (i == 1) {
      second_started = true;
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!second_started && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    first_saw_it = second_started;
  });
  EXPECT_TRUE(first_saw_it);
}

TEST(ForEachIndex, RethrowsTheFailureAndStartsNoFurtherTask) {
  std::vector<int64_t> ran;
  try {
    for_each_index(10, 1, [&](int64_t i) {
      ran.push_back(i);
      if (i == 3) throw std::runtime_error("task 3 failed");
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task 3 failed");
  }
  EXPECT_EQ(ran, (std::vector<int64_t>{0, 1, 2, 3}));
  // On several threads: the failure still arrives, after every thread has stopped.
  std::atomic<int> started{0};
  EXPECT_THROW(for_each_index(1000, 3, [&](int64_t i) {
                 started++;
                 if (i == 5) throw std::invalid_argument("five");
                 std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the others cannot run out the rest meanwhile
               }),
               std::invalid_argument);
  EXPECT_LT(started.load(), 1000);
}
