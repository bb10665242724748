// The thread that commits a run's blocks (run/commit_thread): in order, off the compute streams, with
// one commit waiting at most; a failed commit stops the later ones and reaches the pipeline.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "run/commit_thread.hpp"

using namespace attnscan;
using namespace std::chrono_literals;

TEST(CommitThread, CommitsInTheOrderHandedOverOnAThreadOfItsOwn) {
  std::vector<int> order;
  std::mutex m;
  std::thread::id ran_on;
  {
    CommitThread commits(1);
    for (int i = 0; i < 20; ++i)
      commits.hand_over([&, i] {
        std::lock_guard<std::mutex> lock(m);
        order.push_back(i);
        ran_on = std::this_thread::get_id();
      });
    commits.drain();
    std::lock_guard<std::mutex> lock(m);
    ASSERT_EQ(order.size(), 20u);
  }
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(CommitThread, HandOverWaitsOnlyWhileTheQueueIsFull) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> started{0};
  CommitThread commits(1);
  commits.hand_over([&] {
    ++started;
    released.wait();  // a commit stuck on the disk
  });
  while (started.load() == 0) std::this_thread::sleep_for(1ms);
  commits.hand_over([] {});  // one may wait beside it: no block
  auto third = std::async(std::launch::async, [&] { commits.hand_over([] {}); });
  EXPECT_EQ(third.wait_for(100ms), std::future_status::timeout);  // the queue is full
  release.set_value();
  EXPECT_EQ(third.wait_for(10s), std::future_status::ready);
  commits.drain();
}

TEST(CommitThread, AFailedCommitStopsTheLaterOnesAndIsRethrown) {
  std::atomic<int> ran{0};
  CommitThread commits(2);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  commits.hand_over([&] {
    released.wait();
    throw std::runtime_error("OUT.h5.tmp: fdatasync failed");
  });
  commits.hand_over([&] { ++ran; });  // queued behind the failure: never runs
  release.set_value();
  try {
    commits.drain();
    FAIL() << "drain returned after a failed commit";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "OUT.h5.tmp: fdatasync failed");
  }
  EXPECT_THROW(commits.hand_over([&] { ++ran; }), std::runtime_error);
  EXPECT_EQ(ran.load(), 0);
}

TEST(CommitThread, TheBlocksHandedOverCommitWhenThePipelineEndsInAnError) {
  std::atomic<int> ran{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  try {
    CommitThread commits(1);
    commits.hand_over([&] {
      released.wait();
      ++ran;
    });
    commits.hand_over([&] { ++ran; });
    release.set_value();
    throw std::runtime_error("a detector failed");  // no drain: the destructor still commits both
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(ran.load(), 2);
}
