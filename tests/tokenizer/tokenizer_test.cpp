// WordPiece tokenizer: behaviour on a generated vocabulary, then parity with HF BertTokenizer on the
// committed hard cases and on every sentence of ../shared/datasets (fixtures generated at set-up).
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "model/model_weights.hpp"
#include "tokenizer/tokenizer.hpp"
#include "support/jsonl.hpp"
#include "support/model_builder.hpp"
#include "support/test_paths.hpp"
#include "model/model_tokenizer.hpp"

using namespace attnscan;

namespace {

Tokenizer small_tokenizer() { return Tokenizer(Vocab(test::test_vocab()), TokenizerConfig{}); }

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

}  // namespace

TEST(Tokenizer, SplitsWordsIntoPiecesAndKeepsWordIndex) {
  auto tok = small_tokenizer();
  auto t = tok.tokenize("The  CATS sat.");
  EXPECT_EQ(join(t.pieces), "the cat ##s sat .");
  EXPECT_EQ(t.word_index, (std::vector<int32_t>{0, 1, 1, 2, 3}));
  EXPECT_EQ(join(t.words), "the cats sat .");
  auto s = tok.tokenize("strawberries");
  EXPECT_EQ(join(s.pieces), "straw ##berries");
  EXPECT_EQ(s.word_index, (std::vector<int32_t>{0, 0}));
}

TEST(Tokenizer, PairEncodingHasSegmentsSpecialsAndWordIndices) {
  auto tok = small_tokenizer();
  auto e = tok.encode_pair("I went to the store.", "The cat sat.");
  EXPECT_EQ(join(e.tokens), "[CLS] i went to the store . [SEP] the cat sat . [SEP]");
  EXPECT_EQ(e.segment, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(e.special, (std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(e.word_index, (std::vector<int32_t>{-1, 0, 1, 2, 3, 4, 5, -1, 0, 1, 2, 3, -1}));
  EXPECT_FALSE(e.truncated);
  EXPECT_EQ(e.tokens_a, 6u);
  EXPECT_EQ(e.tokens_b, 4u);
}

TEST(Tokenizer, BertTemplateTypeIdsFollowTheSentences) {
  auto tok = small_tokenizer();
  EXPECT_EQ(tok.pair_template().added(true), 3u);
  EXPECT_EQ(tok.source(), "vocab.txt (WordPiece, BERT template)");
  auto e = tok.encode_pair("the cat", "sat");
  EXPECT_EQ(e.type_ids, (std::vector<uint8_t>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(e.segment, e.type_ids);
  auto s = tok.encode_single("the cat");
  EXPECT_EQ(join(s.tokens), "[CLS] the cat [SEP]");
  EXPECT_EQ(s.type_ids, (std::vector<uint8_t>{0, 0, 0, 0}));
}

namespace {
Tokenizer roberta_style_tokenizer() {
  auto tokens = test::test_vocab();
  for (const char* t : {"<s>", "</s>", "<pad>", "<mask>"}) tokens.push_back(t);
  TokenizerConfig cfg;
  cfg.cls_token = "<s>";
  cfg.sep_token = "</s>";
  cfg.pad_token = "<pad>";
  cfg.mask_token = "<mask>";
  return Tokenizer(Vocab(tokens), cfg, TemplateKind::Roberta);
}
}  // namespace

TEST(Tokenizer, RobertaTemplateSeparatesSentenceFromTokenType) {
  auto tok = roberta_style_tokenizer();
  EXPECT_EQ(tok.pair_template().added(true), 4u);
  EXPECT_EQ(tok.source(), "vocab.txt (WordPiece, RoBERTa template)");
  auto e = tok.encode_pair("the cat", "sat .");
  EXPECT_EQ(join(e.tokens), "<s> the cat </s> </s> sat . </s>");
  EXPECT_EQ(e.segment, (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(e.type_ids, (std::vector<uint8_t>(8, 0)));
  EXPECT_EQ(e.special, (std::vector<uint8_t>{1, 0, 0, 1, 1, 0, 0, 1}));
  EXPECT_EQ(e.word_index, (std::vector<int32_t>{-1, 0, 1, -1, -1, 0, 1, -1}));
  EXPECT_EQ(join(tok.encode_single("the cat").tokens), "<s> the cat </s>");
  // Truncation counts the four specials: 5 + 2 + 4 = 11 > 9 removes 2, both from the longer A.
  auto t = tok.encode_pair("a b c d e", "the cat", 9);
  EXPECT_EQ(t.removed_a, 2u);
  EXPECT_EQ(t.removed_b, 0u);
  EXPECT_EQ(t.size(), 9u);
  // Lowercasing comes before special tokens are split out (HF's tokenize()): "<MASK>" is "<mask>".
  auto m = tok.tokenize("the <MASK> cat");
  EXPECT_EQ(join(m.pieces), "the <mask> cat");
  EXPECT_EQ(m.special, (std::vector<uint8_t>{0, 1, 0}));
}

TEST(Tokenizer, EmptySentencesGiveOnlySpecialTokens) {
  auto tok = small_tokenizer();
  auto e = tok.encode_pair("", "   ");
  EXPECT_EQ(join(e.tokens), "[CLS] [SEP] [SEP]");
}

TEST(Tokenizer, LongestFirstTruncationIsReported) {
  auto tok = small_tokenizer();
  // A: 10 pieces, B: 3 pieces, 16 with specials; max 10 removes 6, all from the longer A.
  auto e = tok.encode_pair("a b c d e f g h i j", "the cat sat", 10);
  EXPECT_TRUE(e.truncated);
  EXPECT_EQ(e.removed_a, 6u);
  EXPECT_EQ(e.removed_b, 0u);
  EXPECT_EQ(join(e.tokens), "[CLS] a b c d [SEP] the cat sat [SEP]");
  // Equal lengths: the odd token comes off B (HF rule).
  auto f = tok.encode_pair("a b c", "d e f", 6);
  EXPECT_EQ(f.removed_a, 1u);
  EXPECT_EQ(f.removed_b, 2u);
  EXPECT_THROW(tok.encode_pair("a", "b", 2), Error);
}

TEST(Tokenizer, OverlongWordBecomesUnk) {
  auto tok = small_tokenizer();
  auto t = tok.tokenize(std::string(101, 'a') + " " + std::string(100, 'a'));
  ASSERT_EQ(t.pieces.size(), 101u);
  EXPECT_EQ(t.pieces[0], "[UNK]");
  EXPECT_EQ(t.pieces[1], "a");
  EXPECT_EQ(t.word_index[100], 1);
}

TEST(Tokenizer, UnmatchableWordBecomesSingleUnk) {
  auto tok = small_tokenizer();
  auto t = tok.tokenize("cat€s");
  EXPECT_EQ(join(t.pieces), "[UNK]");
}

TEST(Tokenizer, SpecialTokensWrittenInTextStaySpecial) {
  auto tok = small_tokenizer();
  auto t = tok.tokenize("the[SEP]cat [cls]");
  EXPECT_EQ(join(t.pieces), "the [SEP] cat [UNK] c ##l ##s [UNK]");  // "[" "]" are not in the test vocab
  EXPECT_EQ(t.special[1], 1);
}

TEST(Tokenizer, InvalidUtf8IsAnError) {
  auto tok = small_tokenizer();
  try {
    tok.tokenize("caf\xC3");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid UTF-8 at byte 3"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
namespace {

void expect_ids(const Tokenizer& tok, const nlohmann::json& row, const std::string& label, int& failures) {
  std::vector<int32_t> want = row["ids"].get<std::vector<int32_t>>();
  std::vector<int32_t> got;
  std::vector<uint8_t> types;
  if (row.contains("a")) {
    auto e = tok.encode_pair(row["a"].get<std::string>(), row["b"].get<std::string>(), row["max_length"].get<std::size_t>());
    got = e.ids;
    types = e.type_ids;
    if (got == want && types != row["types"].get<std::vector<uint8_t>>()) got.clear();
  } else {
    got = tok.tokenize(row["text"].get<std::string>()).ids;
  }
  if (got != want && ++failures <= 10) ADD_FAILURE() << label << ": token ids differ from HF for " << row.dump();
}

}  // namespace

TEST(TokenizerParity, HardCasesMatchHuggingFace) {
  auto model = test::real_model_dir();
  if (!std::filesystem::exists(model / "vocab.txt"))
    GTEST_SKIP() << "default model not found at " << model << " (run the README set-up command)";
  auto rows = test::read_jsonl(test::source_dir() / "tests/fixtures/tokenizer_hard_cases.jsonl");
  ASSERT_GE(rows.size(), 80u);
  auto vocab = Vocab::load(model / "vocab.txt");
  int failures = 0;
  for (const auto& row : rows) {
    TokenizerConfig cfg;
    cfg.do_lower_case = row["do_lower_case"].get<bool>();
    if (!row["strip_accents"].is_null()) cfg.strip_accents = row["strip_accents"].get<bool>();
    Tokenizer tok(vocab, cfg);
    expect_ids(tok, row, row["setting"].get<std::string>(), failures);
  }
  EXPECT_EQ(failures, 0);
}

TEST(TokenizerParity, SharedDatasetsMatchHuggingFace) {
  auto fixture = test::fixture_dir() / "tokens.jsonl";
  if (!std::filesystem::exists(fixture))
    GTEST_SKIP() << "reference fixture " << fixture << " missing: it is generated from ../shared/datasets "
                 << "by tests/reference/make_fixtures.py during the README test command";
  auto model = test::real_model_dir();
  auto loaded = load_model_config(model / "config.json");
  auto tok = load_tokenizer(model, loaded);
  auto rows = test::read_jsonl(fixture);
  std::size_t sentences = 0, pairs = 0;
  int failures = 0;
  for (const auto& row : rows) {
    (row.contains("a") ? pairs : sentences)++;
    expect_ids(tok, row, row["source"].get<std::string>(), failures);
  }
  EXPECT_GE(sentences, 2000u);
  EXPECT_EQ(failures, 0);
  std::cout << "compared " << sentences << " sentences and " << pairs << " truncated pair encodings with HF\n";
}

// A report label of a line break or a tab shows a symbol, not nothing (a decoder's pair separator is "\n").
TEST(ReadableToken, LineBreaksAndTabsAreVisible) {
  EXPECT_EQ(readable_token("\xC4\x8A", SubwordKind::ByteLevelBpe), "\xE2\x86\xB5");               // "Ċ": "\n"
  EXPECT_EQ(readable_token("\xC4\x8A\xC4\x8A", SubwordKind::ByteLevelBpe), "\xE2\x86\xB5\xE2\x86\xB5");
  EXPECT_EQ(readable_token("\xC4\x89", SubwordKind::ByteLevelBpe), "\xE2\x87\xA5");               // "ĉ": "\t"
  EXPECT_EQ(readable_token("\xC4\xA0the", SubwordKind::ByteLevelBpe), "\xE2\x96\x81the");         // unchanged: "▁the"
  EXPECT_EQ(readable_token("a\nb", SubwordKind::Bpe), "a\xE2\x86\xB5" "b");
}
