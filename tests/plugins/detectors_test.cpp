// The seven detector plugins on synthetic attention where the answer is known exactly, and the
// plugin host's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "plugin_host/attention_maps.hpp"
#include "plugin_host/plugin_host.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

enum class Family { Bert, Roberta };

// Tokens from words, in the family's pair template: BERT "[CLS] a... [SEP] b... [SEP]" (type ids
// 0/1), RoBERTa "<s> a... </s></s> b... </s>" (type ids all 0). A word "straw+##berries" becomes two
// pieces.
sdk::Example make_example(const std::vector<std::string>& a, const std::vector<std::string>& b,
                          Family family = Family::Bert) {
  const bool bert = family == Family::Bert;
  sdk::Example e;
  e.id = "test";
  auto add_special = [&](const char* t, sdk::TokenRole role, uint8_t sentence) {
    e.tokens.push_back({t, 0, role, sentence, static_cast<uint8_t>(bert ? sentence : 0), -1, t});
  };
  auto add_sentence = [&](const std::vector<std::string>& words, uint8_t sentence) {
    for (std::size_t w = 0; w < words.size(); ++w) {
      std::string rest = words[w];
      std::string whole;
      for (char c : words[w])
        if (c != '+' && c != '#') whole.push_back(c);
      std::size_t pos;
      do {
        pos = rest.find('+');
        e.tokens.push_back({rest.substr(0, pos), 0, sdk::TokenRole::Content, sentence,
                            static_cast<uint8_t>(bert ? sentence : 0), static_cast<int32_t>(w), whole});
        if (pos != std::string::npos) rest = rest.substr(pos + 1);
      } while (pos != std::string::npos);
    }
  };
  const char* begin = bert ? "[CLS]" : "<s>";
  const char* sep = bert ? "[SEP]" : "</s>";
  add_special(begin, sdk::TokenRole::Begin, 0);
  add_sentence(a, 0);
  add_special(sep, sdk::TokenRole::Separator, 0);
  if (!bert) add_special(sep, sdk::TokenRole::Separator, 0);  // RoBERTa closes A with two
  add_sentence(b, 1);
  add_special(sep, sdk::TokenRole::Separator, 1);
  return e;
}

// Index of the k-th token (0-based) whose text is `text`.
std::size_t find_token(const sdk::Example& e, const std::string& text, int k = 0) {
  for (std::size_t i = 0; i < e.size(); ++i)
    if (e.tokens[i].text == text && k-- == 0) return i;
  throw std::runtime_error("no token " + text);
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
  for (Family family : {Family::Bert, Family::Roberta}) {
    auto e = make_example({"i", "went"}, {"at", "the", "store"}, family);
    const std::size_t n = e.size();
    auto a = single_head(e, [&](std::size_t i, std::size_t j) { return float(j == std::min(i + 1, n - 1)); });
    auto next = run("next_token", e), prev = run("prev_token", e);
    EXPECT_FLOAT_EQ(next.scores[0], 1.0f);
    EXPECT_FLOAT_EQ(next.baseline[0], 1.0f / float(n));
    EXPECT_FLOAT_EQ(prev.scores[0], 0.0f);
    // Within sentences only: [CLS]->i, went->[SEP], [SEP]->at... are left out; the rest are still 1.
    auto within = run("next_token", e, {{"within_sentence", "true"}});
    EXPECT_FLOAT_EQ(within.scores[0], 1.0f);
    // i->went, at->the, the->store: 3 queries with one target each
    EXPECT_FLOAT_EQ(within.baseline[0], 1.0f / float(n));
  }
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

// One head per layer attending uniformly over the keys each query of the layer sees.
static std::vector<float> uniform_over_visible(const sdk::Example& e) {
  const std::size_t n = e.size();
  std::vector<float> a(static_cast<std::size_t>(e.layers) * n * n);
  for (int64_t l = 0; l < e.layers; ++l)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        a[(static_cast<std::size_t>(l) * n + i) * n + j] = e.sees(l, i, j) ? 1.0f / float(e.visible_keys(l, i)) : 0.0f;
  return a;
}

// Layer 0 sees every key, layer 1 only |i - j| <= 1 (a sliding window): attention uniform over what each
// query sees scores exactly its layer's baseline, for every detector, and the windowed layer's baseline
// is over the window (docs/patterns.md, "Sliding-window layers").
TEST(Detectors, UniformAttentionOverAWindowScoresItsLayersBaseline) {
  auto e = make_example({"the", "cat", "straw+##berries"}, {"the", "cat", "sat"});
  const std::size_t n = e.size();
  e.layers = 2;
  e.heads = 1;
  e.key_ranges = {{}, {1, 1}};
  const std::vector<float> a = uniform_over_visible(e);
  e.attention = a.data();
  EXPECT_EQ(e.visible_keys(0, 0), n);
  EXPECT_EQ(e.visible_keys(1, 0), 2u);
  EXPECT_EQ(e.visible_keys(1, 4), 3u);
  EXPECT_EQ(e.visible_keys(1, n - 1), 2u);
  for (const char* p : {"next_token", "prev_token", "same_sentence_match", "cross_sentence_match", "subword_siblings",
                        "delimiter", "entropy"}) {
    auto s = run(p, e);
    ASSERT_EQ(s.scores.size(), s.baseline.size()) << p;  // one head: a baseline per output and layer
    for (std::size_t k = 0; k < s.baseline.size(); ++k)  // NaN together where no query sees a target in the window
      if (std::isnan(s.baseline[k])) EXPECT_TRUE(std::isnan(s.scores[k])) << p << " " << k;
      else EXPECT_NEAR(s.scores[k], s.baseline[k], 1e-6) << p << " " << k;
  }
  // next token: every query but the last sees its target; 1/n on layer 0, mean of 1/|window| on layer 1.
  const auto next = run("next_token", e);
  double windowed = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) windowed += 1.0 / double(e.visible_keys(1, i));
  EXPECT_FLOAT_EQ(next.baseline[0], 1.0f / float(n));
  EXPECT_FLOAT_EQ(next.baseline[1], float(windowed / double(n - 1)));
  // [CLS] (key 0) is in the window of queries 0 and 1 only, the only queries that count: (1/2 + 1/3) / 2 on layer 1.
  EXPECT_FLOAT_EQ(run("delimiter", e).baseline[1], float((1.0 / 2 + 1.0 / 3) / 2.0));
  double entropy = 0;
  for (std::size_t i = 0; i < n; ++i) entropy += std::log(double(e.visible_keys(1, i)));
  EXPECT_NEAR(run("entropy", e).baseline[1], entropy / double(n), 1e-6);
}

// A decoder's causal layers: query i sees keys 0..i. Attention uniform over them scores its layer's baseline
// for every detector; a pattern no query can see (the next token) has no score and no baseline (NaN), not 0
// against 0; the previous token's baseline is the mean of 1 / (i + 1) over the queries that have one.
TEST(Detectors, CausalLayersScoreOnlyWhatAQuerySees) {
  auto e = make_example({"the", "cat", "straw+##berries"}, {"the", "cat", "sat"});
  const std::size_t n = e.size();
  e.layers = 2;
  e.heads = 1;
  e.key_ranges = {{-1, 0}, {2, 0}};  // causal; a causal window of 3 keys
  const std::vector<float> a = uniform_over_visible(e);
  e.attention = a.data();
  EXPECT_EQ(e.visible_keys(0, 0), 1u);
  EXPECT_EQ(e.visible_keys(0, n - 1), n);
  EXPECT_EQ(e.visible_keys(1, n - 1), 3u);
  EXPECT_FALSE(e.sees(0, 2, 3));
  for (const char* p : {"prev_token", "same_sentence_match", "cross_sentence_match", "subword_siblings", "delimiter", "entropy"}) {
    auto s = run(p, e);
    for (std::size_t k = 0; k < s.baseline.size(); ++k)
      if (std::isnan(s.baseline[k])) EXPECT_TRUE(std::isnan(s.scores[k])) << p << " " << k;
      else EXPECT_NEAR(s.scores[k], s.baseline[k], 1e-6) << p << " " << k;
  }
  const auto next = run("next_token", e);
  for (std::size_t k = 0; k < 2; ++k) EXPECT_TRUE(std::isnan(next.scores[k]) && std::isnan(next.baseline[k])) << k;
  double previous = 0;
  for (std::size_t i = 1; i < n; ++i) previous += 1.0 / double(i + 1);
  EXPECT_FLOAT_EQ(run("prev_token", e).baseline[0], float(previous / double(n - 1)));
  // B attends to A across the pair; A cannot see B, so only B's tokens count as queries
  const auto cross = run("cross_sentence_match", e);
  EXPECT_FALSE(std::isnan(cross.scores[0]));
}

// A norm-weighted map is zero outside a layer's window as the weights are, so it keeps the window; a
// rollout composes the layers below, so its reach is their ranges added up: unbounded past a global layer,
// causal where every layer is.
TEST(Detectors, MapsKeepTheWindowOnlyWhereTheyStayInside) {
  auto e = make_example({"a", "b", "c"}, {"d"});
  const std::size_t n = e.size();
  e.layers = 2;
  e.heads = 1;
  e.key_ranges = {{}, {1, 1}};
  std::vector<float> a(2 * n * n, 0.0f), norms(2 * n, 1.0f);
  for (std::size_t l = 0; l < 2; ++l)
    for (std::size_t i = 0; i < n; ++i) a[(l * n + i) * n + i] = 1.0f;
  e.attention = a.data();
  e.value_norms = norms.data();
  std::vector<std::vector<float>> storage;
  EXPECT_EQ(map_examples(AttentionMap::Norm, {e}, {}, storage)[0].key_ranges, e.key_ranges);
  EXPECT_EQ(map_examples(AttentionMap::Rollout, {e}, {}, storage)[0].key_ranges,
            (std::vector<sdk::KeyRange>{{}, {}}));
  e.key_ranges = {{1, 1}, {2, 1}};
  EXPECT_EQ(map_examples(AttentionMap::Rollout, {e}, {}, storage)[0].key_ranges,
            (std::vector<sdk::KeyRange>{{1, 1}, {3, 2}}));
  e.key_ranges = {{-1, 0}, {3, 0}};  // a decoder: causal, then a causal window
  EXPECT_EQ(map_examples(AttentionMap::Rollout, {e}, {}, storage)[0].key_ranges,
            (std::vector<sdk::KeyRange>{{-1, 0}, {-1, 0}}));
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

// Sentences come from Token::sentence, not the type id, which is all 0 in RoBERTa's template.
TEST(Detectors, WordRepeatedAcrossSentences) {
  for (Family family : {Family::Bert, Family::Roberta}) {
    auto e = make_example({"the", "store"}, {"a", "store"}, family);
    // BERT: [CLS] the store [SEP] a store [SEP]; store(2) <-> store(5). RoBERTa: store(2) <-> store(6).
    const std::size_t s1 = find_token(e, "store"), s2 = find_token(e, "store", 1);
    auto a = single_head(e, [&](std::size_t i, std::size_t j) {
      if (i == s1) return j == s2 ? 0.6f : j == s1 ? 0.4f : 0.0f;
      if (i == s2) return j == s1 ? 0.2f : j == s2 ? 0.8f : 0.0f;
      return j == 0 ? 1.0f : 0.0f;
    });
    auto cross = run("cross_sentence_match", e);
    EXPECT_FLOAT_EQ(cross.scores[0], 0.4f);  // queries with a match: store(s1) 0.6, store(s2) 0.2
    EXPECT_FLOAT_EQ(cross.baseline[0], 1.0f / float(e.size()));
    auto same = run("same_sentence_match", e);
    // every content token matches itself: the, store, a, store -> (0 + 0.4 + 0 + 0.8) / 4
    EXPECT_FLOAT_EQ(same.scores[0], 0.3f);
  }
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

// Every query puts 0.5 on the leading special and 0.5 spread over the separators: delimiter finds
// them by role, so BERT's [CLS]/[SEP] and RoBERTa's <s>/</s></s>/</s> score the same.
TEST(Detectors, DelimiterScoresTheSameOnBertAndRobertaTemplates) {
  std::vector<sdk::ExampleScores> scores;
  for (Family family : {Family::Bert, Family::Roberta}) {
    auto e = make_example({"a", "b"}, {"c"}, family);
    float separators = 0;
    for (const auto& t : e.tokens) separators += t.role == sdk::TokenRole::Separator;
    auto a = single_head(e, [&](std::size_t, std::size_t j) {
      const auto role = e.tokens[j].role;
      return role == sdk::TokenRole::Begin ? 0.5f : role == sdk::TokenRole::Separator ? 0.5f / separators : 0.0f;
    });
    scores.push_back(run("delimiter", e));
  }
  const auto &bert = scores[0], &roberta = scores[1];
  ASSERT_EQ(bert.scores.size(), 3u);
  ASSERT_EQ(roberta.scores.size(), 3u);
  const float expected[] = {0.5f, 0.5f, 1.0f};
  for (std::size_t o = 0; o < 3; ++o) {
    EXPECT_FLOAT_EQ(bert.scores[o], expected[o]) << o;
    EXPECT_FLOAT_EQ(roberta.scores[o], expected[o]) << o;
  }
  // Baselines count the template's own tokens: n = 6 with 2 separators, n = 7 with 3.
  EXPECT_FLOAT_EQ(bert.baseline[1], 2.0f / 6.0f);
  EXPECT_FLOAT_EQ(roberta.baseline[0], 1.0f / 7.0f);
  EXPECT_FLOAT_EQ(roberta.baseline[1], 3.0f / 7.0f);
}

// A "[SEP]" written in sentence A is neither a delimiter nor a word, whatever its text says.
TEST(Detectors, SpecialWrittenInTheTextIsNeitherDelimiterNorWord) {
  auto e = make_example({"a"}, {"b"});  // [CLS] a [SEP] b [SEP]
  e.tokens.insert(e.tokens.begin() + 2, {"[SEP]", 0, sdk::TokenRole::SpecialInText, 0, 0, 1, "[SEP]"});
  auto a = single_head(e, [](std::size_t, std::size_t j) { return j == 2 ? 1.0f : 0.0f; });  // all on it
  auto s = run("delimiter", e);
  EXPECT_FLOAT_EQ(s.scores[1], 0.0f);
  EXPECT_FLOAT_EQ(s.baseline[1], 2.0f / 6.0f);
  // Were it a word it would match itself with mass 1: (0 + 1 + 0) / 3; it is not, so (0 + 0) / 2.
  EXPECT_FLOAT_EQ(run("same_sentence_match", e).scores[0], 0.0f);
}

// score_target_sets sums several heads side by side: each head's score must be the number its sum alone
// gives (targets in order, in double), bit for bit, whatever the head count and in windowed layers.
TEST(Detectors, TargetSetScoresAreEachHeadsOwnSum) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> weight(0.0f, 1.0f);
  for (int64_t heads : {1, 3, 4, 5, 8, 9, 12}) {
    sdk::Example e = make_example({"the", "straw+##berries", "were", "sold"}, {"strawberries", "the", "market"});
    const std::size_t n = e.size();
    e.layers = 2, e.heads = heads;
    e.key_ranges = {{}, {2, 2}};
    std::vector<float> maps(static_cast<std::size_t>(e.layers * heads) * n * n);
    for (auto& x : maps) x = weight(rng);
    e.attention = maps.data();
    std::vector<std::vector<std::size_t>> targets(n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if ((i * 7 + j * 3) % 5 == 0 && i != 2) targets[i].push_back(j);
    std::vector<float> scores(static_cast<std::size_t>(e.layers * heads)), baseline(2);
    sdk::score_target_sets(e, targets, scores.data(), baseline.data());
    for (int64_t l = 0; l < e.layers; ++l)
      for (int64_t h = 0; h < heads; ++h) {
        double total = 0;
        std::size_t q = 0;  // the queries that see one of their targets in this layer
        for (std::size_t i = 0; i < n; ++i) {
          bool sees = false;
          for (std::size_t j : targets[i]) sees |= e.sees(l, i, j);
          if (!sees) continue;
          ++q;
          for (std::size_t j : targets[i]) total += e.head(l, h)[i * n + j];
        }
        EXPECT_EQ(scores[static_cast<std::size_t>(l * heads + h)], static_cast<float>(total / static_cast<double>(q)))
            << heads << " heads, layer " << l << ", head " << h;
      }
  }
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

// A plugin built against the SDK before Token had roles (API version 2) is refused, not misread.
TEST(PluginErrors, PluginOfThePreviousApiVersionIsRefused) {
  try {
    PluginHost().load_file(fs::path(ATTNSCAN_FAULT_PLUGIN_DIR) / "old_api.so", {});
    FAIL();
  } catch (const PluginError& e) {
    const std::string expected = "plugin built for detector API version " + std::to_string(sdk::kApiVersion - 1) +
                                 ", this attnscan provides version " + std::to_string(sdk::kApiVersion) + "; rebuild it";
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
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
