// Layout v1 columns round-trip through a file, and the per-head score statistics equal a direct
// computation (mean, sample sd, normal-approximation CI, baseline).
#include <gtest/gtest.h>

#include <cmath>

#include "store/layout_file.hpp"
#include "store/offset_baselines.hpp"
#include "store/score_stats.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

LayoutParams two_heads() {
  LayoutParams p;
  p.layers = {0};
  p.heads = {0, 1};
  p.model_layers = 1;
  p.model_heads = 2;
  p.scores = {{"det", "out", "1.0", "", ""}};
  return p;
}

LayoutChunk chunk(const std::vector<float>& head0, const std::vector<float>& head1, const std::vector<float>& baseline) {
  LayoutChunk c;
  for (std::size_t i = 0; i < head0.size(); ++i) {
    auto& e = c.examples;
    e.index.push_back(i);
    e.row.push_back(i + 2);
    e.id.push_back("id" + std::to_string(i));
    e.sentence_a.push_back("sentence ä " + std::to_string(i));
    e.sentence_b.push_back("b");
    e.label.push_back(i % 2 ? "1" : "0");
    e.has_label.push_back(1);
    e.label_value.push_back(static_cast<double>(i % 2));
    e.n_tokens.push_back(1);
    e.tokens_a.push_back(1);
    e.tokens_b.push_back(0);
    e.truncated.push_back(0);
    e.token_offset.push_back(i);
    e.attention_offset.push_back(-1);
    c.tokens.id.push_back(static_cast<int32_t>(i));
    c.tokens.word_index.push_back(0);
    c.tokens.text.push_back("t" + std::to_string(i));
    c.tokens.word.push_back("w");
    c.tokens.segment.push_back(0);
    c.tokens.special.push_back(0);
    c.tokens.char_start.push_back(9);  // "ä" of "sentence ä i": a code point, not its two bytes
    c.tokens.char_end.push_back(10);
    c.scores["det/out"].values.push_back(head0[i]);
    c.scores["det/out"].values.push_back(head1[i]);
    c.scores["det/out"].baseline.push_back(baseline[i]);
  }
  c.rejects.index = {7};
  c.rejects.line = {9};
  c.rejects.file = {"x.tsv"};
  c.rejects.reason = {"too few fields"};
  return c;
}

TEST(LayoutFile, EveryColumnRoundTrips) {
  const fs::path f = test::scratch_dir("layout_roundtrip") / "f.h5";
  const LayoutChunk in = chunk({0.1f, 0.2f, 0.3f}, {1, 2, 3}, {0.5f, 0.5f, 0.5f});
  {
    LayoutWriter w(f, two_heads());
    w.append(in);
    w.file().set_attr("/", "format", std::string(kFormatName));
    w.file().set_attr("/", "format_version", kFormatVersion);
  }
  const LayoutReader r(f);
  const LayoutChunk out = r.read(1, 3, 0, 1);  // a slice: offsets come back relative to it
  EXPECT_EQ(out.examples.index, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(out.examples.sentence_a, (std::vector<std::string>{"sentence ä 1", "sentence ä 2"}));
  EXPECT_EQ(out.examples.label, (std::vector<std::string>{"1", "0"}));
  EXPECT_EQ(out.examples.token_offset, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(out.tokens.text, (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(out.rejects.reason, (std::vector<std::string>{"too few fields"}));
  EXPECT_EQ(out.scores.at("det/out").values, (std::vector<float>{0.2f, 2, 0.3f, 3}));
  EXPECT_EQ(r.params().scores.at(0).key(), "det/out");
}

// One example, A = 5 words (word 1 in two pieces), B = 3 words, with their gold trees.
LayoutChunk tree_chunk() {
  LayoutChunk c;
  struct Tok { uint8_t segment; int32_t word, head; const char* relation; };
  const std::vector<Tok> toks = {{0, -1, -2, ""}, {0, 0, 1, "det"}, {0, 1, 2, "nsubj"}, {0, 1, 2, "nsubj"},
                                 {0, 2, -1, "ROOT"}, {0, 3, 2, "punct"}, {0, 4, 2, "punct"}, {0, -1, -2, ""},
                                 {1, 0, 2, "nmod:poss"}, {1, 1, 2, "amod"}, {1, 2, -1, "ROOT"}, {1, -1, -2, ""}};
  auto& e = c.examples;
  e.index = {0}, e.row = {1}, e.id = {"s"}, e.sentence_a = {"a"}, e.sentence_b = {"b"}, e.label = {""};
  e.has_label = {0}, e.label_value = {NAN}, e.n_tokens = {12}, e.tokens_a = {6}, e.tokens_b = {3};
  e.truncated = {0}, e.token_offset = {0}, e.attention_offset = {-1};
  for (const auto& t : toks) {
    c.tokens.id.push_back(1), c.tokens.text.push_back("x"), c.tokens.word.push_back("x");
    c.tokens.segment.push_back(t.segment), c.tokens.word_index.push_back(t.word), c.tokens.special.push_back(t.word < 0);
    c.tokens.char_start.push_back(-1), c.tokens.char_end.push_back(-1);  // offsets are not what this test is about
    c.dep_head.push_back(t.head), c.dep_relation.push_back(t.relation);
  }
  return c;
}

TEST(LayoutFile, TreeColumnsSurviveReopenAndGiveClarksOffsetCounts) {
  const fs::path f = test::scratch_dir("layout_trees") / "f.h5";
  LayoutParams p = two_heads();
  p.scores.clear();
  p.trees = true;
  const LayoutChunk in = tree_chunk();
  {
    LayoutWriter w(f, p);
    w.append(in);
    w.file().set_attr("/", "format", std::string(kFormatName));
    w.file().set_attr("/", "format_version", kFormatVersion);
  }
  LayoutWriter::reopen(f, p).append(in);  // a resumed finishing pass: rows dropped, appended again
  const LayoutReader r(f);
  ASSERT_TRUE(r.params().trees);
  const LayoutChunk out = r.read(0, 1, 0, 0);
  EXPECT_EQ(out.dep_head, in.dep_head);
  EXPECT_EQ(out.dep_relation, in.dep_relation);
  const auto counts = offset_counts(r.file(), r.examples());
  auto at = [&](const std::string& rel, int o) { return counts.at(rel).correct[o - kMinOffset]; };
  EXPECT_EQ(counts.count("ROOT"), 0u);                      // roots have no head word
  EXPECT_EQ(counts.at("det").words, 1);
  EXPECT_EQ(counts.at("nsubj").words, 1);                   // one word, however many pieces
  EXPECT_EQ(counts.at("punct").words, 2);
  EXPECT_EQ(at("punct", -1), 1);
  EXPECT_EQ(at("punct", -2), 1);
  EXPECT_EQ(counts.at("punct").best_offset(), -1);          // tie: the smaller |o|
  EXPECT_EQ(counts.at("nmod").words, 1);                    // nmod:poss counts as nmod
  for (int o = 2; o <= 5; ++o) EXPECT_EQ(at("nmod", o), 1) << o;  // clamped to B's last word
  EXPECT_EQ(at("nmod", 1), 0);
  EXPECT_EQ(counts.at("nmod").best_offset(), 2);
  EXPECT_EQ(counts.at("amod").best_offset(), 1);
  EXPECT_EQ(counts.at("amod").best_correct(), 1);
  OffsetCounts tie;
  tie.correct[3 - kMinOffset] = tie.correct[-3 - kMinOffset] = 4;
  EXPECT_EQ(tie.best_offset(), -3);                         // then the negative one
  EXPECT_EQ(OffsetCounts{}.best_offset(), 0);
}

TEST(ScoreStats, MeanSdCiAndBaselineOverDefinedExamples) {
  const fs::path f = test::scratch_dir("score_stats") / "f.h5";
  {
    LayoutWriter w(f, two_heads());
    w.append(chunk({1, 2, 3, NAN}, {4, 4, 4, 4}, {0.1f, 0.2f, 0.3f, 0.9f}));
  }
  const h5::File file = h5::File::open_read(f);
  const HeadStats s = compute_head_stats(file, "det/out", 2);
  EXPECT_FLOAT_EQ(s.count[0], 3);  // the NaN example is left out
  EXPECT_FLOAT_EQ(s.mean[0], 2);
  EXPECT_FLOAT_EQ(s.sd[0], 1);  // sample sd of 1, 2, 3
  EXPECT_FLOAT_EQ(s.ci_low[0], static_cast<float>(2 - 1.96 / std::sqrt(3.0)));
  EXPECT_FLOAT_EQ(s.ci_high[0], static_cast<float>(2 + 1.96 / std::sqrt(3.0)));
  EXPECT_FLOAT_EQ(s.baseline_mean[0], 0.2f);  // over the same three examples
  EXPECT_FLOAT_EQ(s.count[1], 4);
  EXPECT_FLOAT_EQ(s.sd[1], 0);
  EXPECT_FLOAT_EQ(s.baseline_mean[1], 0.375f);
  const std::vector<uint8_t> odd = {0, 1, 0, 1};
  const HeadStats g = compute_head_stats(file, "det/out", 2, &odd);
  EXPECT_FLOAT_EQ(g.count[0], 1);
  EXPECT_FLOAT_EQ(g.mean[0], 2);
  EXPECT_TRUE(std::isnan(g.ci_low[0]));  // one example: no interval
}

}  // namespace
