// The tokens detectors get from a pair encoding: roles come from the template, so that BERT's
// `[CLS] A [SEP] B [SEP]`, RoBERTa/MPNet's `<s> A </s></s> B </s>` and a decoder's joined `<bos> A \n B` give
// the same roles, and the sentence is kept apart from the model's type id.
#include <gtest/gtest.h>

#include "run/example_columns.hpp"
#include "support/model_builder.hpp"
#include "support/test_paths.hpp"
#include "model/model_tokenizer.hpp"

using namespace attnscan;
using sdk::TokenRole;

namespace {

Tokenizer bert_tokenizer() { return Tokenizer(Vocab(test::test_vocab()), TokenizerConfig{}); }

Tokenizer roberta_tokenizer() {
  auto tokens = test::test_vocab();
  for (const char* t : {"<s>", "</s>", "<pad>", "<mask>"}) tokens.push_back(t);
  TokenizerConfig cfg;
  cfg.cls_token = "<s>";
  cfg.sep_token = "</s>";
  cfg.pad_token = "<pad>";
  cfg.mask_token = "<mask>";
  return Tokenizer(Vocab(tokens), cfg, TemplateKind::Roberta);
}

struct Columns {
  std::vector<TokenRole> role;
  std::vector<uint8_t> sentence, type_id;
};

Columns detector_columns(const Tokenizer& tok, const Encoding& enc) {
  Columns c;
  for (std::size_t t = 0; t < enc.size(); ++t) {
    const sdk::Token token = detector_token(enc, t, tok.pair_template());
    EXPECT_EQ(token.text, enc.tokens[t]);
    EXPECT_EQ(token.id, enc.ids[t]);
    EXPECT_EQ(token.word_index, enc.word_index[t]);
    EXPECT_EQ(token.word, token_word(enc, t));
    c.role.push_back(token.role);
    c.sentence.push_back(token.sentence);
    c.type_id.push_back(token.type_id);
  }
  return c;
}

constexpr TokenRole B = TokenRole::Begin, S = TokenRole::Separator, C = TokenRole::Content,
                    T = TokenRole::SpecialInText;

}  // namespace

TEST(DetectorTokens, BertTemplate) {
  const auto tok = bert_tokenizer();
  const auto c = detector_columns(tok, tok.encode_pair("the cat", "sat"));  // [CLS] the cat [SEP] sat [SEP]
  EXPECT_EQ(c.role, (std::vector<TokenRole>{B, C, C, S, C, S}));
  EXPECT_EQ(c.sentence, (std::vector<uint8_t>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(c.type_id, (std::vector<uint8_t>{0, 0, 0, 0, 1, 1}));
}

TEST(DetectorTokens, RobertaTemplateHasTheSameRolesAndSentencesButNoTypeIds) {
  const auto tok = roberta_tokenizer();
  const auto c = detector_columns(tok, tok.encode_pair("the cat", "sat"));  // <s> the cat </s></s> sat </s>
  EXPECT_EQ(c.role, (std::vector<TokenRole>{B, C, C, S, S, C, S}));
  EXPECT_EQ(c.sentence, (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(c.type_id, (std::vector<uint8_t>(7, 0)));
}

TEST(DetectorTokens, SpecialWrittenInTheTextBelongsToItsSentence) {
  const auto tok = bert_tokenizer();
  const auto c = detector_columns(tok, tok.encode_pair("the [SEP] cat", "[CLS] sat"));
  // [CLS] the [SEP] cat [SEP] [CLS] sat [SEP]
  EXPECT_EQ(c.role, (std::vector<TokenRole>{B, C, T, C, S, T, C, S}));
  EXPECT_EQ(c.sentence, (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1, 1}));
}

// Truncated to no room for A or B, the template's own tokens remain: the leading one is still the
// only Begin (its position in the template says so, not its place before A's first token).
TEST(DetectorTokens, EmptySentencesKeepTheTemplateRoles) {
  const auto bert = bert_tokenizer();
  const auto b = detector_columns(bert, bert.encode_pair("the", "cat", 3));  // [CLS] [SEP] [SEP]
  EXPECT_EQ(b.role, (std::vector<TokenRole>{B, S, S}));
  EXPECT_EQ(b.sentence, (std::vector<uint8_t>{0, 0, 1}));
  const auto roberta = roberta_tokenizer();
  const auto r = detector_columns(roberta, roberta.encode_pair("the", "cat", 4));  // <s> </s></s> </s>
  EXPECT_EQ(r.role, (std::vector<TokenRole>{B, S, S, S}));
}

// A decoder's pair joined as one text (`<|begin_of_text|> A \n B`, SmolLM2's `A \n B`): the BOS is Begin, the
// newline between the sentences the Separator closing A, every other token content of its own sentence and word,
// so the detectors read a decoder's pair as they read `[CLS] A [SEP] B`.
TEST(DetectorTokens, JoinedPairHasTheTemplatesRoles) {
  for (const char* name : {"llama3", "smollm2"}) {
    const auto dir = test::fixture_dir() / "trained_tokenizers" / name;
    if (!std::filesystem::exists(dir / "tokenizer.json"))
      GTEST_SKIP() << dir << " missing: made by tests/reference/train_tokenizers.py (scripts/setup.sh test)";
    TokenizerFacts facts;
    facts.vocab_size = facts.max_tokens = 1 << 20;
    facts.pairs = PairEncoding::Joined;
    const auto tok = Tokenizer::from_model_dir(dir, facts);
    const Encoding enc = tok.encode_pair("the cat", "the mat");  // [bos] the Ġcat Ċ the Ġmat
    const auto c = detector_columns(tok, enc);
    const bool bos = std::string(name) == "llama3";
    std::vector<TokenRole> roles = {C, C, S, C, C};
    std::vector<uint8_t> sentences = {0, 0, 0, 1, 1};
    if (bos) roles.insert(roles.begin(), B), sentences.insert(sentences.begin(), 0);
    ASSERT_EQ(enc.size(), roles.size()) << name << ": " << testing::PrintToString(enc.tokens);
    EXPECT_EQ(c.role, roles) << name;
    EXPECT_EQ(c.sentence, sentences) << name;
    EXPECT_EQ(c.type_id, std::vector<uint8_t>(roles.size(), 0)) << name;
    const std::size_t first = bos ? 1 : 0;
    EXPECT_EQ(detector_token(enc, first, tok.pair_template()).word, "the");
    EXPECT_EQ(detector_token(enc, first + 3, tok.pair_template()).word, "the");  // B's first word, its own word 0
    EXPECT_EQ(detector_token(enc, first + 3, tok.pair_template()).word_index, 0);
    EXPECT_EQ(detector_token(enc, first + 4, tok.pair_template()).word, "mat");
  }
}
