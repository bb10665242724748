// The seven detector plugins on synthetic attention where the answer is known exactly, and the
// plugin host's errors.
#include <gtest/gtest.h>

#include <cmath>

#include "attnscan/plugin_host.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

// Tokens "[CLS] a... [SEP] b... [SEP]" from words; a word "straw+##berries" becomes two pieces.
sdk::Example make_example(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  sdk::Example e;
  e.id = "test";
  auto add_special = [&](const char* t, uint8_t seg) { e.tokens.push_back({t, 0, seg, -1, true, t}); };
  auto add_sentence = [&](const std::vector<std::string>& words, uint8_t seg) {
    for (std::size_t w = 0; w < words.size(); ++w) {
      std::string rest = words[w];
      std::string whole;
      for (char c : words[w])
        if (c != '+' && c != '#') whole.push_back(c);
      std::size_t pos;
      do {
        pos = rest.find('+');
        e.tokens.push_back({rest.substr(0, pos), 0, seg, static_cast<int32_t>(w), false, whole});
        if (pos != std::string::npos) rest = rest.substr(pos + 1);
      } while (pos != std::string::npos);
    }
  };
  add_special("[CLS]", 0);
  add_sentence(a, 0);
  add_special("[SEP]", 0);
  add_sentence(b, 1);
  add_special("[SEP]", 1);
  return e;
}

struct Attention {
  std::vector<float> values;
};

// One layer, one head, the given n x n matrix.
Attention single_head(sdk::Example& e, const std::function<float(std::size_t, std::size_t)>& f) {
  const std::size_t n = e.size();
  Attention a;
  a.values.resize(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) a.values[i * n + j] = f(i, j);
  e.layers = 1;
  e.heads = 1;
  e.attention = a.values.data();  // the vector's buffer survives the move out of this function
  return a;
}

sdk::ExampleScores run(const std::string& plugin, const sdk::Example& e, std::map<std::string, std::string> params = {}) {
  auto d = PluginHost().load(plugin, params);
  return d.score({e}).front();
}

}  // namespace

TEST(Detectors, PerfectNextTokenMatrix) {
  auto e = make_example({"i", "went"}, {"at", "the", "store"});
  const std::size_t n = e.size();
  auto a = single_head(e, [&](std::size_t i, std::size_t j) { return float(j == std::min(i + 1, n - 1)); });
  auto next = run("next_token", e), prev = run("prev_token", e);
  EXPECT_FLOAT_EQ(next.scores[0], 1.0f);
  EXPECT_FLOAT_EQ(next.baseline[0], 1.0f / float(n));
  EXPECT_FLOAT_EQ(prev.scores[0], 0.0f);
  // Within sentences only: [CLS]->i, went->[SEP], [SEP]->at... are left out; the rest are still 1.
  auto within = run("next_token", e, {{"within_sentence", "true"}});
  EXPECT_FLOAT_EQ(within.scores[0], 1.0f);
}

TEST(Detectors, UniformAttentionScoresItsBaseline) {
  auto e = make_example({"the", "cat", "straw+##berries"}, {"the", "cat", "sat"});
  const std::size_t n = e.size();
  auto a = single_head(e, [&](std::size_t, std::size_t) { return 1.0f / float(n); });
  for (const char* p : {"next_token", "prev_token", "same_sentence_match", "cross_sentence_match", "subword_siblings",
                        "delimiter", "entropy"}) {
    auto s = run(p, e);
    ASSERT_EQ(s.scores.size(), s.baseline.size()) << p;
    for (std::size_t o = 0; o < s.baseline.size(); ++o) EXPECT_NEAR(s.scores[o], s.baseline[o], 1e-6) << p;
  }
  EXPECT_NEAR(run("entropy", e).baseline[0], std::log(double(n)), 1e-6);
}

TEST(Detectors, SubwordSiblingsOfASplitWord) {
  auto e = make_example({"fresh", "straw+##berries"}, {"ok"});
  // tokens: [CLS] fresh straw ##berries [SEP] ok [SEP]; straw->##berries 0.7, ##berries->straw 0.3
  auto a = single_head(e, [&](std::size_t i, std::size_t j) {
    if (i == 2) return j == 3 ? 0.7f : j == 0 ? 0.3f : 0.0f;
    if (i == 3) return j == 2 ? 0.3f : j == 0 ? 0.7f : 0.0f;
    return j == 0 ? 1.0f : 0.0f;
  });
  auto s = run("subword_siblings", e);
  EXPECT_FLOAT_EQ(s.scores[0], 0.5f);            // mean of 0.7 and 0.3
  EXPECT_FLOAT_EQ(s.baseline[0], 1.0f / 7.0f);   // one sibling each, n = 7
  auto none = make_example({"no", "split"}, {"here"});
  auto b = single_head(none, [&](std::size_t, std::size_t j) { return float(j == 0); });
  EXPECT_TRUE(std::isnan(run("subword_siblings", none).scores[0]));
}

TEST(Detectors, WordRepeatedAcrossSentences) {
  auto e = make_example({"the", "store"}, {"a", "store"});
  // tokens: [CLS] the store [SEP] a store [SEP]; store(2) <-> store(5)
  auto a = single_head(e, [&](std::size_t i, std::size_t j) {
    if (i == 2) return j == 5 ? 0.6f : j == 2 ? 0.4f : 0.0f;
    if (i == 5) return j == 2 ? 0.2f : j == 5 ? 0.8f : 0.0f;
    return j == 0 ? 1.0f : 0.0f;
  });
  auto cross = run("cross_sentence_match", e);
  EXPECT_FLOAT_EQ(cross.scores[0], 0.4f);  // queries with a match: store(2) 0.6, store(5) 0.2
  EXPECT_FLOAT_EQ(cross.baseline[0], 1.0f / 7.0f);
  auto same = run("same_sentence_match", e);
  // every non-special token matches itself: the, store, a, store -> (0 + 0.4 + 0 + 0.8) / 4
  EXPECT_FLOAT_EQ(same.scores[0], 0.3f);
  auto none = make_example({"red"}, {"blue"});
  auto b = single_head(none, [&](std::size_t, std::size_t) { return 0.2f; });
  EXPECT_TRUE(std::isnan(run("cross_sentence_match", none).scores[0]));
}

TEST(Detectors, StemMatching) {
  auto e = make_example({"she", "plays"}, {"playing", "now"});
  auto a = single_head(e, [&](std::size_t i, std::size_t j) { return (i == 2 && j == 4) || (i == 4 && j == 2) ? 1.0f : float(i != 2 && i != 4 && j == 0); });
  EXPECT_TRUE(std::isnan(run("cross_sentence_match", e).scores[0]));            // exact: plays != playing
  EXPECT_FLOAT_EQ(run("cross_sentence_match", e, {{"match", "stem"}}).scores[0], 1.0f);  // stems: play
}

TEST(Detectors, DelimiterOutputs) {
  auto e = make_example({"a"}, {"b"});  // [CLS] a [SEP] b [SEP]
  auto a = single_head(e, [&](std::size_t, std::size_t j) { return j == 0 ? 0.5f : j == 2 ? 0.3f : j == 4 ? 0.2f : 0.0f; });
  auto s = run("delimiter", e);
  ASSERT_EQ(s.scores.size(), 3u);
  EXPECT_FLOAT_EQ(s.scores[0], 0.5f);
  EXPECT_FLOAT_EQ(s.scores[1], 0.5f);
  EXPECT_FLOAT_EQ(s.scores[2], 1.0f);
  EXPECT_FLOAT_EQ(s.baseline[0], 0.2f);
  EXPECT_FLOAT_EQ(s.baseline[1], 0.4f);
}

TEST(PluginHost, ListsTheSevenDetectors) {
  std::set<std::string> names;
  for (const auto& d : PluginHost().discover()) names.insert(d.info.name);
  for (const char* p : {"next_token", "prev_token", "same_sentence_match", "cross_sentence_match", "subword_siblings",
                        "delimiter", "entropy"})
    EXPECT_TRUE(names.count(p)) << p;
}

TEST(PluginErrors, UnknownPluginListsAvailableOnes) {
  try {
    PluginHost().load("next_tokens", {});
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("no detector plugin 'next_tokens' (available: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("next_token"), std::string::npos);
  }
}

TEST(PluginErrors, MisspelledOrIllTypedParameter) {
  try {
    PluginHost().load("next_token", {{"within_sentense", "true"}});
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_STREQ(e.what(), "detector next_token: unknown parameter 'within_sentense' (parameters: within_sentence)");
  }
  try {
    PluginHost().load("next_token", {{"within_sentence", "maybe"}});
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_STREQ(e.what(), "detector next_token: parameter 'within_sentence' expects true or false, got 'maybe'");
  }
  EXPECT_THROW(PluginHost().load("same_sentence_match", {{"match", "fuzzy"}}), PluginError);
}

TEST(PluginErrors, WrongApiVersionAndMissingFile) {
  const fs::path dir = ATTNSCAN_FAULT_PLUGIN_DIR;
  try {
    PluginHost().load_file(dir / "wrong_api.so", {});
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("plugin built for detector API version 999, this attnscan provides version " +
                                         std::to_string(sdk::kApiVersion)),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(PluginHost().load_file(dir / "nope.so", {}), PluginError);
}

TEST(PluginErrors, ThrowingPluginNamesTheExample) {
  auto d = PluginHost({ATTNSCAN_FAULT_PLUGIN_DIR}).load("throwing", {});
  auto ok = make_example({"fine"}, {"x"});
  auto bad = make_example({"boom"}, {"x"});
  bad.id = "row-42";
  auto a1 = single_head(ok, [](std::size_t, std::size_t) { return 0.0f; });
  auto a2 = single_head(bad, [](std::size_t, std::size_t) { return 0.0f; });
  EXPECT_NO_THROW(d.score({ok}));
  try {
    d.score({ok, bad});
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_STREQ(e.what(), "detector throwing failed on example row-42: boom token seen");
  }
}

// Each broken plugin of tests/plugins/faulty is refused with a message saying what is wrong, and no
// exception from inside the plugin escapes its exported functions.
std::string load_error(const std::string& file) {
  try {
    PluginHost().load_file(fs::path(ATTNSCAN_FAULT_PLUGIN_DIR) / file, {});
  } catch (const PluginError& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(PluginBoundary, OtherStringAbiIsRefusedSayingWhatDiffers) {
  const std::string e = load_error("wrong_abi.so");
  EXPECT_NE(e.find("built with another C++ ABI than this attnscan (_GLIBCXX_USE_CXX11_ABI: plugin 0, attnscan 1"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("rebuild it"), std::string::npos) << e;
}

TEST(PluginBoundary, DebugModeIsRefused) {
  const std::string e = load_error("debug_mode.so");
  EXPECT_NE(e.find("debug mode: plugin on, attnscan off"), std::string::npos) << e;
}

TEST(PluginBoundary, NullInfoIsAClearError) {
  EXPECT_NE(load_error("null_info.so").find("plugin info failed: it returned no detector info"), std::string::npos)
      << load_error("null_info.so");
}

TEST(PluginBoundary, ExceptionsStayInsideTheExportedFunctions) {
  EXPECT_NE(load_error("info_throws.so").find("plugin info failed: no info today"), std::string::npos)
      << load_error("info_throws.so");
  const std::string e = load_error("create_throws.so");
  EXPECT_NE(e.find("detector create_throws ("), std::string::npos) << e;
  EXPECT_NE(e.find("cannot be created: table file missing"), std::string::npos) << e;
}

TEST(PluginBoundary, DefaultOfTheWrongTypeIsNamed) {
  const std::string e = load_error("bad_default.so");
  EXPECT_NE(e.find("parameter 'scale' is declared double but its default 1 is int (write it as a double, e.g. 1.0)"),
            std::string::npos)
      << e;
}

TEST(PluginBoundary, FileNameMustBeTheDetectorName) {
  const std::string e = load_error("misnamed.so");
  EXPECT_NE(e.find("declares detector 'something_else' but the file is named misnamed.so (name it something_else.so)"),
            std::string::npos)
      << e;
}

TEST(PluginBoundary, ListingConstructsNoDetector) {
  // create_throws.so would fail if constructed; listing only reads its info.
  std::vector<std::string> problems;
  const auto found = PluginHost({ATTNSCAN_FAULT_PLUGIN_DIR}).discover(&problems);
  bool listed = false;
  for (const auto& p : found) listed |= p.info.name == "create_throws";
  EXPECT_TRUE(listed);
  for (const auto& p : problems) EXPECT_EQ(p.find("create_throws"), std::string::npos) << p;
}
