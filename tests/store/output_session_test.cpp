// The output's life cycle (store/output_session): lock, resume decision, commits, finish, and what a
// failure keeps. Built from hand-made chunks: no model, no ../shared.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "store/output_session.hpp"
#include "store/parts_folder.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

LayoutParams scores_layout() {
  LayoutParams p;
  p.layers = {0};
  p.heads = {0, 1};
  p.model_layers = 1;
  p.model_heads = 2;
  p.scores = {{"det", "out", "1.0", "a test output", ""}};
  return p;
}

RootInfo identity(const std::string& model_sha = "m") {
  RootInfo r;
  r.identity = {"config: x\n", model_sha, "d", "det 1.0 abc\n"};
  r.block_rows = 2;
  return r;
}

// Block b holds rows 2b and 2b+1, each one example of 2 tokens, score = row index.
LayoutChunk block_chunk(uint64_t b) {
  LayoutChunk c;
  for (uint64_t i = 0; i < 2; ++i) {
    const uint64_t row = 2 * b + i;
    auto& e = c.examples;
    e.index.push_back(row);
    e.row.push_back(row + 1);
    e.id.push_back("ex" + std::to_string(row));
    e.sentence_a.push_back("a");
    e.sentence_b.push_back("b");
    e.label.push_back("");
    e.has_label.push_back(0);
    e.label_value.push_back(NAN);
    e.n_tokens.push_back(2);
    e.tokens_a.push_back(1);
    e.tokens_b.push_back(1);
    e.truncated.push_back(0);
    e.token_offset.push_back(2 * i);
    e.attention_offset.push_back(-1);
    for (int t = 0; t < 2; ++t) {
      c.tokens.id.push_back(t);
      c.tokens.word_index.push_back(t);
      c.tokens.text.push_back(t ? "b" : "a");
      c.tokens.word.push_back(t ? "b" : "a");
      c.tokens.segment.push_back(static_cast<uint8_t>(t));
      c.tokens.special.push_back(0);
      c.tokens.char_start.push_back(0);  // "a" and "b": each token its whole sentence
      c.tokens.char_end.push_back(1);
    }
    auto& s = c.scores["det/out"];
    s.values.push_back(static_cast<float>(row));
    s.values.push_back(static_cast<float>(row) + 0.5f);
    s.baseline.push_back(0.25f);
  }
  return c;
}

TEST(OutputSession, ASecondWriterIsRefusedNamingTheHolder) {
  const fs::path out = test::scratch_dir("session_lock") / "out.h5";
  OutputSession first(out, "attnscan run");
  try {
    OutputSession second(out, "attnscan merge");
    FAIL() << "a second session took the lock";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is in use by another attnscan process (pid " + std::to_string(::getpid())),
              std::string::npos)
        << e.what();
  }
}

TEST(OutputSession, ResumesCommittedBlocksAndFinishesInOrder) {
  const fs::path out = test::scratch_dir("session_resume") / "out.h5";
  std::ostringstream log;
  {
    OutputSession s(out, "test");
    ASSERT_TRUE(s.begin(identity(), scores_layout(), false, log));
    s.plan_attention({}, log);
    s.commit(1, 2, block_chunk(1));  // blocks commit in any order
    s.commit(0, 2, block_chunk(0));
  }  // interrupted here: block 2 never committed
  OutputSession s(out, "test");
  ASSERT_TRUE(s.begin(identity(), scores_layout(), false, log));
  EXPECT_EQ(s.committed(), (std::set<uint64_t>{0, 1}));
  EXPECT_NE(log.str().find("resuming: 2 block(s) already committed"), std::string::npos) << log.str();
  s.plan_attention({}, log);
  s.commit(2, 2, block_chunk(2));
  const FinishedOutput done = s.finish(6, log);
  EXPECT_EQ(done.root.examples_written, 6u);
  EXPECT_EQ(done.root.rows_read, 6u);
  EXPECT_FALSE(fs::exists(s.parts()));
  LayoutReader r(out);
  EXPECT_EQ(r.file().read<uint64_t>("examples/index", 0, 6), (std::vector<uint64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(r.file().read_rows("scores/det/out/values", 4, 5), (std::vector<float>{4.0f, 4.5f}));
  EXPECT_EQ(r.file().read<int64_t>("examples/token_offset", 0, 6), (std::vector<int64_t>{0, 2, 4, 6, 8, 10}));
}

TEST(OutputSession, AFinishedOutputIsNotRedoneAndAnotherRunIsRefused) {
  const fs::path out = test::scratch_dir("session_complete") / "out.h5";
  std::ostringstream log;
  {
    OutputSession s(out, "test");
    ASSERT_TRUE(s.begin(identity(), scores_layout(), false, log));
    s.plan_attention({}, log);
    s.commit(0, 2, block_chunk(0));
    s.finish(2, log);
  }
  OutputSession again(out, "test");
  EXPECT_FALSE(again.begin(identity(), scores_layout(), false, log));
  EXPECT_NE(log.str().find("is already complete (2 examples); nothing to do"), std::string::npos);
  try {
    again.begin(identity("other-model"), scores_layout(), false, log);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exists from a different run (the model weights changed"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(again.begin(identity("other-model"), scores_layout(), /*overwrite=*/true, log));
}

TEST(OutputSession, ResumeWithAnotherIdentityIsRefusedNamingIt) {
  const fs::path out = test::scratch_dir("session_refuse") / "out.h5";
  std::ostringstream log;
  {
    OutputSession s(out, "test");
    ASSERT_TRUE(s.begin(identity(), scores_layout(), false, log));
    s.commit(0, 2, block_chunk(0));
  }
  RootInfo rebuilt = identity();
  rebuilt.identity.detector_builds = "det 1.0 def\n";
  OutputSession s(out, "test");
  try {
    s.begin(rebuilt, scores_layout(), false, log);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("refusing to resume into " + (out.string() + ".parts") +
                                         ": the detector plugin det changed (version 1.0, library sha256 abc..."),
              std::string::npos)
        << e.what();
  }
}

TEST(OutputSession, AFailureSaysWhatIsKept) {
  const fs::path dir = test::scratch_dir("session_failure");
  std::ostringstream log;
  OutputSession kept(dir / "kept.h5", "test");
  ASSERT_TRUE(kept.begin(identity(), scores_layout(), false, log));
  kept.commit(0, 2, block_chunk(0));
  EXPECT_NE(kept.failure_note().find("kept: " + (dir / "kept.h5.parts").string() + " (1 committed block(s))"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "kept.h5.parts" / "block-0000000000.h5"));
  OutputSession empty(dir / "empty.h5", "test");
  ASSERT_TRUE(empty.begin(identity(), scores_layout(), false, log));
  EXPECT_EQ(empty.failure_note(), "nothing was committed; no partial output is left behind.");
  EXPECT_FALSE(fs::exists(dir / "empty.h5.parts"));
}

}  // namespace

namespace {

// A status reader (attnscan slurm status) counts blocks while a writer commits: it must not touch
// the writer's files; only the writer, on resume, clears what an interruption left.
TEST(PartsFolder, CountingBlocksLeavesInFlightFilesAlone) {
  const fs::path dir = test::scratch_dir("parts_reading");
  for (const char* name : {"block-0000000000.h5", "block-0000000004.h5", "block-0000000008.h5.tmp", "block-0000000012.h5.spill"})
    std::ofstream(dir / name) << "x";
  EXPECT_EQ(committed_blocks(dir), (std::set<uint64_t>{0, 4}));
  EXPECT_TRUE(fs::exists(dir / "block-0000000008.h5.tmp"));
  remove_interrupted_commits(dir);
  EXPECT_FALSE(fs::exists(dir / "block-0000000008.h5.tmp"));
  EXPECT_FALSE(fs::exists(dir / "block-0000000012.h5.spill"));
  EXPECT_EQ(committed_blocks(dir), (std::set<uint64_t>{0, 4}));
}

}  // namespace
