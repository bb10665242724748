// Character offsets of tokens, as the tokenizer's stages carry them (tokenizer/normalized_text.hpp):
// the alignment conventions of the `tokenizers` crate, hand-checked cases through a tokenizer, and
// parity with the `offset_mapping` of Hugging Face's fast tokenizers (tests/reference/make_offset_fixtures.py)
// for every token of every reference encoding, through both the tokenizer.json and the slow files.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "common/error.hpp"
#include "tokenizer/normalized_text.hpp"
#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/tokenizer.hpp"
#include "support/jsonl.hpp"
#include "support/test_paths.hpp"
#include "support/tokenizer_config.hpp"
#include "model/model_tokenizer.hpp"

using namespace attnscan;
using detail::NormalizedText;
using nlohmann::json;

namespace {

using Spans = std::vector<std::pair<int64_t, int64_t>>;

Spans spans_of(const NormalizedText& t) {
  Spans out;
  for (std::size_t i = 0; i < t.size(); ++i) out.emplace_back(t.original(i, i + 1).start, t.original(i, i + 1).end);
  return out;
}

Spans spans_of(const SentenceTokens& t) {
  Spans out;
  for (const auto& s : t.offsets) out.emplace_back(s.start, s.end);
  return out;
}

}  // namespace

// The crate's conventions: a removed character goes with the one before it (whose span stays its own);
// a decomposition's extra characters are inserted with the span of the character they came from; a
// Replace's content takes the span of the match's last character; a prepended string the first's.
TEST(NormalizedText, AlignsEveryCharacterAsTheTokenizersCrate) {
  NormalizedText t(U"a\x01" U"b");
  t.filter([](char32_t c) { return c != 1; });
  EXPECT_EQ(t.text(), U"ab");
  EXPECT_EQ(spans_of(t), (Spans{{0, 1}, {2, 3}}));
  EXPECT_EQ(t.original(0, 2), (CharSpan{0, 3}));

  NormalizedText fi(U"x\ufb01ne");  // NFKC: "ﬁ" -> "fi", both of the ligature
  detail::unicode_form(detail::UnicodeForm::NFKC, fi);
  EXPECT_EQ(fi.text(), U"xfine");
  EXPECT_EQ(spans_of(fi), (Spans{{0, 1}, {1, 2}, {1, 2}, {2, 3}, {3, 4}}));

  NormalizedText e(U"e\u0301x");  // NFC: the composed character takes the first one's span only
  detail::unicode_form(detail::UnicodeForm::NFC, e);
  EXPECT_EQ(e.text(), U"\u00e9x");
  EXPECT_EQ(spans_of(e), (Spans{{0, 1}, {2, 3}}));

  NormalizedText q(U"a``b");
  detail::NormalizerStep quotes;
  quotes.kind = detail::NormalizerStep::Kind::Replace;
  quotes.find = U"``";
  quotes.content = U"\"";
  detail::replace(quotes, q);
  EXPECT_EQ(q.text(), U"a\"b");
  EXPECT_EQ(spans_of(q), (Spans{{0, 1}, {2, 3}, {3, 4}}));

  NormalizedText w = NormalizedText(U"  hi").slice(2, 4);
  EXPECT_EQ(w.origin(), 2);
  w.prepend(U"\u2581");
  EXPECT_EQ(spans_of(w), (Spans{{2, 3}, {2, 3}, {3, 4}}));
  EXPECT_EQ(w.original(1, 1), (CharSpan{3, 3}));  // an empty range: origin + begin, unconverted
}

// The slow WordPiece path: lowercasing, NFC then NFD with accents removed, removed control characters,
// CJK characters split; [UNK] covers its whole word; a special token written in the text its characters.
TEST(TokenOffsets, WordPieceMapsBackThroughLowercasingAccentsAndRemovedCharacters) {
  const Tokenizer tok(Vocab(std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "cafe", "##s", "au",
                                                     "lait", "x", "y", "ab", "\u5bb6", "\u65cf", "!"}),
                      TokenizerConfig{});
  EXPECT_EQ(spans_of(tok.tokenize("Caf\u00e9s au lait")), (Spans{{0, 4}, {4, 5}, {6, 8}, {9, 13}}));
  EXPECT_EQ(spans_of(tok.tokenize("Cafe\u0301 x")), (Spans{{0, 4}, {6, 7}}));
  EXPECT_EQ(spans_of(tok.tokenize("a\x01" "b \u5bb6\u65cf!")), (Spans{{0, 3}, {4, 5}, {5, 6}, {6, 7}}));
  const SentenceTokens unk = tok.tokenize("x \u2603\u2603 [SEP] y");
  EXPECT_EQ(unk.pieces, (std::vector<std::string>{"x", "[UNK]", "[SEP]", "y"}));
  EXPECT_EQ(spans_of(unk), (Spans{{0, 1}, {2, 4}, {5, 10}, {11, 12}}));
  // Template specials have none; the encoding carries each sentence's own offsets.
  const Encoding enc = tok.encode_pair("x", "au lait");
  ASSERT_EQ(enc.offsets.size(), 6u);
  EXPECT_EQ(enc.offsets[0], CharSpan{});
  EXPECT_EQ(enc.offsets[1], (CharSpan{0, 1}));
  EXPECT_EQ(enc.offsets[4], (CharSpan{3, 7}));
  EXPECT_EQ(enc.offsets[5], CharSpan{});
}

namespace {

struct Counts {
  std::size_t encodings = 0, tokens = 0, mismatches = 0, known = 0, skipped_other_ids = 0;
  std::string first, last_printed;
  int printed = 0;
};

ModelConfig config_of(const std::string& model, const std::filesystem::path& dir) {
  if (std::filesystem::exists(dir / "config.json")) return test::tokenizer_model_config(dir);
  ModelConfig c;  // the trained tokenizers (tests/reference/train_tokenizers.py): named by family
  c.model_type = model == "wordlevel" ? "bert" : model;  // the WordLevel tokenizer is a BERT model's
  c.vocab_size = 3002;
  c.max_position_embeddings = 514;
  return c;
}

// Whether `dir` has a slow tokenizer's file besides tokenizer.json.
bool has_slow_file(const std::filesystem::path& dir) {
  for (const char* f : {"vocab.txt", "vocab.json", "sentencepiece.bpe.model", "spiece.model", "spm.model"})
    if (std::filesystem::exists(dir / f)) return true;
  return false;
}

}  // namespace

// The encodings (model, file, source) whose offsets differ from HF's fast tokenizer's, with why
// (docs/hdf5-layout.md, Character offsets): every one must still differ (the list cannot go stale), and
// nothing else may.
using KnownKey = std::tuple<std::string, std::string, std::string>;
constexpr const char* kSlowAlbertKeepsMarks =
    "AlbertTokenizer (slow) drops only combining class > 0 after NFKD and keeps U+FE0F and U+0947 (class 0, "
    "Mn) inside an <unk>, where the fast tokenizer's StripAccents drops every Mn: same ids, the slow <unk> "
    "also spans the character it kept (TokenOffsets.SlowAlbertUnknownSpansTheMarksItKeeps)";
const std::map<KnownKey, const char*> kKnownDifferences = {
    {{"albert", "slow", "hard:7"}, kSlowAlbertKeepsMarks},
    {{"albert", "slow", "hard-pair:27"}, kSlowAlbertKeepsMarks},
    {{"albert", "slow", "hard:22"}, kSlowAlbertKeepsMarks},
};

// Every token of every reference encoding has HF's offsets (template specials: -1/-1 where HF gives
// (0, 0)). tokenizer.json must give HF's ids on every row; the slow files are compared where their ids
// are HF fast's (where HF's slow and fast tokenizers differ, e.g. NFC, the row is counted and left out).
TEST(TokenOffsets, SameOffsetsAsHuggingFaceFastTokenizers) {
  const auto file = test::fixture_dir() / "offsets.jsonl";
  if (!std::filesystem::exists(file))
    GTEST_SKIP() << file << " absent: run scripts/setup.sh (tests/reference/make_offset_fixtures.py)";
  std::map<std::string, std::vector<json>> by_model;
  for (auto& row : test::read_jsonl(file)) by_model[row.at("model").get<std::string>()].push_back(std::move(row));
  ASSERT_FALSE(by_model.empty());
  std::size_t total_mismatches = 0;
  std::set<KnownKey> seen_known;
  for (const auto& [model, rows] : by_model) {
    const std::filesystem::path dir = rows.front().at("dir").get<std::string>();
    if (!std::filesystem::exists(dir)) {
      ADD_FAILURE() << dir << " (named by " << file << ") is gone: regenerate the fixture";
      continue;
    }
    for (auto which : {TokenizerFile::TokenizerJson, TokenizerFile::Slow}) {
      if (which == TokenizerFile::Slow && !has_slow_file(dir)) continue;  // WordLevel: tokenizer.json only
      const char* name = which == TokenizerFile::TokenizerJson ? "tokenizer.json" : "slow";
      const Tokenizer tok = load_tokenizer(dir, config_of(model, dir), which);
      Counts n;
      for (const auto& row : rows) {
        const std::string a = row.at("a").get<std::string>();
        const bool pair = !row.at("b").is_null();
        const std::string b = pair ? row.at("b").get<std::string>() : "";
        const auto max_length = row.at("max_length").get<std::size_t>();
        const Encoding enc = pair ? tok.encode_pair(a, b, max_length) : tok.encode_single(a, max_length);
        const auto ids = row.at("ids").get<std::vector<int32_t>>();
        if (enc.ids != ids) {
          if (which == TokenizerFile::TokenizerJson)
            ADD_FAILURE() << model << " tokenizer.json: ids differ from HF on " << row.at("source");
          ++n.skipped_other_ids;
          continue;
        }
        const auto& got = enc.offsets;
        const auto& want = row.at("offsets");
        const auto& seq = row.at("sequence_ids");
        ++n.encodings;
        for (std::size_t t = 0; t < enc.size(); ++t) {
          ++n.tokens;
          const bool template_special = seq[t].is_null();
          const int64_t ws = template_special ? -1 : want[t][0].get<int64_t>();
          const int64_t we = template_special ? -1 : want[t][1].get<int64_t>();
          if (got[t].start == ws && got[t].end == we) continue;
          const auto known = kKnownDifferences.find({model, name, row.at("source").get<std::string>()});
          if (known != kKnownDifferences.end()) {
            ++n.known;
            seen_known.insert(known->first);
            continue;
          }
          ++n.mismatches;
          const std::string source = row.at("source").get<std::string>();
          if (n.printed < 6 && source != n.last_printed) {  // the first few, one per source
            n.last_printed = source;
            ++n.printed;
            std::cout << "  mismatch " << model << ": " << source << " token " << t << " '"
                      << enc.tokens[t] << "': (" << got[t].start << ", " << got[t].end << "), HF (" << ws << ", " << we
                      << ") in " << json(t < enc.segment.size() && enc.segment[t] ? b : a).dump() << "\n";
          }
          if (n.first.empty())
            n.first = source + " token " + std::to_string(t) + " '" + enc.tokens[t] +
                      "': (" + std::to_string(got[t].start) + ", " + std::to_string(got[t].end) + "), HF (" +
                      std::to_string(ws) + ", " + std::to_string(we) + ")";
        }
      }
      std::cout << "offsets " << model << " " << name << ": " << n.encodings << " encodings, " << n.tokens
                << " tokens, " << n.mismatches << " mismatches, " << n.known
                << " tokens of the known differences, " << n.skipped_other_ids
                << " rows with other ids than HF fast (not compared)" << (n.first.empty() ? "" : "; first: ")
                << n.first << "\n";
      EXPECT_GT(n.encodings, 0u) << model << " " << name;
      total_mismatches += n.mismatches;
    }
  }
  EXPECT_EQ(total_mismatches, 0u);
  for (const auto& [key, why] : kKnownDifferences)
    if (by_model.count(std::get<0>(key)) && !seen_known.count(key))
      ADD_FAILURE() << std::get<0>(key) << " " << std::get<1>(key) << " " << std::get<2>(key) << " now has HF's offsets: take it off kKnownDifferences (" << why << ")";
}

// The known difference of slow ALBERT (kSlowAlbertKeepsMarks): its normalization keeps U+FE0F (Mn, combining
// class 0) and the fast one drops it, so the same <unk> spans "❤️" through the slow files and "❤" through
// tokenizer.json (HF's offset_mapping, fixture hard:7).
TEST(TokenOffsets, SlowAlbertUnknownSpansTheMarksItKeeps) {
  const auto dir = test::fixture_dir() / "trained_tokenizers" / "albert";
  if (!std::filesystem::exists(dir / "spiece.model"))
    GTEST_SKIP() << dir << " absent: run scripts/setup.sh (tests/reference/train_tokenizers.py)";
  const std::string text = "I \u2764\ufe0f x";
  const Encoding fast = load_tokenizer(dir, config_of("albert", dir), TokenizerFile::TokenizerJson).encode_single(text, 512);
  const Encoding slow = load_tokenizer(dir, config_of("albert", dir), TokenizerFile::Slow).encode_single(text, 512);
  ASSERT_EQ(fast.ids, slow.ids);
  const auto unk = std::find(slow.tokens.begin(), slow.tokens.end(), "<unk>") - slow.tokens.begin();
  ASSERT_LT(static_cast<std::size_t>(unk), slow.size());
  EXPECT_EQ(fast.offsets[static_cast<std::size_t>(unk)], (CharSpan{2, 3}));
  EXPECT_EQ(slow.offsets[static_cast<std::size_t>(unk)], (CharSpan{2, 4}));
}
