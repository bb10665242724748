// `attnscan run` as a library call on the tiny generated model (no ../shared, no real model): an
// interrupted run resumed equals one uninterrupted run; shards merged equal the single run; the
// length-bucketed batches keep their budgets.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "config/run_config.hpp"
#include "run/batching.hpp"
#include "run/run_job.hpp"
#include "store/merge.hpp"
#include "store/parts_folder.hpp"
#include "support/model_builder.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

// A tiny model and a TSV of `rows` pairs of its vocabulary's words, in a fresh folder.
struct Workspace {
  fs::path dir, model, data;
};

Workspace make_setup(const std::string& name, int rows) {
  Workspace s;
  s.dir = test::scratch_dir(name);
  s.model = test::build_model(s.dir / "model", test::tiny_shape());
  s.data = s.dir / "pairs.tsv";
  const std::vector<std::string> words = {"the", "cat", "sat", "on", "mat", "dog", "store", "strawberries", "went", "to"};
  std::mt19937 rng(7);
  std::ofstream out(s.data);
  out << "a\tb\n";
  for (int r = 0; r < rows; ++r) {
    std::string a, b;
    for (int w = 0; w < 2 + static_cast<int>(rng() % 6); ++w) a += (w ? " " : "") + words[rng() % words.size()];
    for (int w = 0; w < 1 + static_cast<int>(rng() % 6); ++w) b += (w ? " " : "") + words[rng() % words.size()];
    out << a << "\t" << b << "\n";
  }
  return s;
}

RunRequest request(const Workspace& s, const fs::path& out, const std::vector<std::string>& sets = {}) {
  ConfigBuilder b;
  const std::vector<std::string> base = {"model=" + s.model.string(), "dataset.path=" + s.data.string(),
                                        "dataset.sentence_a=a", "dataset.sentence_b=b", "output.path=" + out.string(),
                                        "pipeline.block_rows=4", "detectors=next_token,delimiter"};
  for (const auto& kv : base)
    b.set(kv);
  for (const auto& kv : sets) b.set(kv);
  RunRequest r;
  r.config = b.build();
  r.config_yaml = b.dump();
  r.config_identity = b.identity();
  r.progress = false;
  return r;
}

int run(const RunRequest& r, bool stop_at_once = false) {
  std::atomic<bool> stop{stop_at_once};
  std::ostringstream log;
  return run_job(r, stop, log);
}

// Every column, the attention and the scores of two outputs are equal.
void expect_same_content(const fs::path& x, const fs::path& y) {
  const LayoutReader a(x), b(y);
  ASSERT_EQ(a.examples(), b.examples());
  const LayoutChunk ca = a.read(0, a.examples(), 0, a.rejects()), cb = b.read(0, b.examples(), 0, b.rejects());
  EXPECT_EQ(ca.examples.index, cb.examples.index);
  EXPECT_EQ(ca.examples.sentence_a, cb.examples.sentence_a);
  EXPECT_EQ(ca.examples.token_offset, cb.examples.token_offset);
  EXPECT_EQ(ca.examples.attention_offset, cb.examples.attention_offset);
  EXPECT_EQ(ca.tokens.text, cb.tokens.text);
  EXPECT_EQ(ca.attention, cb.attention);
  EXPECT_FALSE(ca.attention.empty());
  ASSERT_EQ(ca.scores.size(), 4u);  // next_token + the three delimiter outputs
  for (const auto& [key, s] : ca.scores) {
    EXPECT_EQ(s.values.size(), cb.scores.at(key).values.size()) << key;
    for (std::size_t i = 0; i < s.values.size(); ++i)
      if (!(std::isnan(s.values[i]) && std::isnan(cb.scores.at(key).values[i])))
        ASSERT_EQ(s.values[i], cb.scores.at(key).values[i]) << key << " " << i;
  }
}

TEST(RunJob, StoppedThenResumedEqualsOneRun) {
  const Workspace s = make_setup("run_resume", 300);
  for (const char* compression : {"none", "lz4"}) {
    const fs::path ref = s.dir / (std::string("ref-") + compression + ".h5");
    const fs::path out = s.dir / (std::string("resumed-") + compression + ".h5");
    const std::vector<std::string> sets = {std::string("output.compression=") + compression};
    ASSERT_EQ(run(request(s, ref, sets)), kRunOk);
    // Stopped before the first block: nothing committed, the parts folder remembers the run.
    ASSERT_EQ(run(request(s, out, sets), /*stop_at_once=*/true), kRunInterrupted);
    EXPECT_TRUE(fs::exists(parts_dir(out)));
    EXPECT_FALSE(fs::exists(out));
    // Stopped while running: as soon as the first block is committed.
    std::atomic<bool> stop{false};
    std::thread watcher([&] {
      for (int i = 0; i < 20000 && !stop; ++i) {
        if (fs::exists(parts_dir(out) / block_name(0))) stop = true;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    });
    std::ostringstream log;
    const int code = run_job(request(s, out, sets), stop, log);
    stop = true;
    watcher.join();
    ASSERT_TRUE(code == kRunInterrupted || code == kRunOk) << log.str();
    std::cout << compression << ": " << (code == kRunInterrupted ? "stopped after the first block, then resumed" : "finished before the stop") << "\n";
    if (code == kRunInterrupted) {
      std::ostringstream again;
      std::atomic<bool> no{false};
      ASSERT_EQ(run_job(request(s, out, sets), no, again), kRunOk);
      EXPECT_NE(again.str().find("resuming: "), std::string::npos) << again.str();
    }
    expect_same_content(ref, out);
  }
}

TEST(RunJob, ShardsMergeToTheSingleRun) {
  const Workspace s = make_setup("run_shards", 60);
  const fs::path single = s.dir / "single.h5";
  ASSERT_EQ(run(request(s, single)), kRunOk);
  std::vector<fs::path> shards;
  for (int i = 0; i < 3; ++i) {
    shards.push_back(s.dir / ("shard" + std::to_string(i) + ".h5"));
    RunRequest r = request(s, shards.back());
    r.shard_index = i;
    r.shard_count = 3;
    ASSERT_EQ(run(r), kRunOk);
  }
  std::ostringstream log;
  merge_shards(s.dir / "merged.h5", shards, false, /*virtual_attention=*/false, log);
  expect_same_content(single, s.dir / "merged.h5");
  const h5::File a = h5::File::open_read(single), b = h5::File::open_read(s.dir / "merged.h5");
  EXPECT_EQ(a.read_rows("scores/next_token/next_token/mean", 0, 2), b.read_rows("scores/next_token/next_token/mean", 0, 2));
}

TEST(Batching, BucketsKeepTheirBudgetsAndCoverEveryItemOnce) {
  std::mt19937 rng(3);
  std::vector<std::size_t> lengths(500);
  for (auto& l : lengths) l = 3 + rng() % 120;
  lengths[17] = 400;  // over the token budget alone: a batch of its own
  const int64_t budget = 768;
  const auto batches = bucket_batches(lengths, budget, kBatchAttentionValues, 72);
  std::vector<int> seen(lengths.size());
  for (const auto& b : batches) {
    ASSERT_FALSE(b.empty());
    std::size_t longest = 0;
    for (std::size_t i : b) longest = std::max(longest, lengths[i]), seen[i]++;
    if (b.size() > 1) {
      EXPECT_LE(static_cast<int64_t>(b.size() * longest), budget);
      if (b.size() * longest > kBatchMinTokens) EXPECT_LE(b.size() * longest * longest * 72, kBatchAttentionValues);
    }
  }
  for (int n : seen) EXPECT_EQ(n, 1);
  bool alone = false;
  for (const auto& b : batches) alone |= b.size() == 1 && b[0] == 17;
  EXPECT_TRUE(alone);
}

TEST(Batching, SmallBatchesGrowPastTheAttentionBudgetUpToTheMinimumTokens) {
  // 144 heads (all-mpnet-base-v2): 5 pairs of 52 tokens fill the attention budget; 7 fill 364 of 384 tokens.
  const std::vector<std::size_t> lengths(40, 52);
  ASSERT_GT(6 * 52 * 52 * 144u, kBatchAttentionValues);
  ASSERT_EQ(kBatchMinTokens, 384u);
  const auto batches = bucket_batches(lengths, 768, kBatchAttentionValues, 144);
  ASSERT_EQ(batches.size(), 6u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(batches[i].size(), 7u);
  EXPECT_EQ(batches[5].size(), 5u);
  // Past the minimum, the budget holds: 128-token pairs go 3 (384 tokens) to a batch, not the 6 of 768 tokens.
  const auto longer = bucket_batches(std::vector<std::size_t>(12, 128), 768, kBatchAttentionValues, 144);
  ASSERT_EQ(longer.size(), 4u);
  for (const auto& b : longer) EXPECT_EQ(b.size(), 3u);
}

}  // namespace
