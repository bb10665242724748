// The tokens detectors get from a pair encoding: roles come from the template, so that BERT's
// `[CLS] A [SEP] B [SEP]` and RoBERTa/MPNet's `<s> A </s></s> B </s>` give the same roles, and the
// sentence is kept apart from the model's type id.
#include <gtest/gtest.h>

#include "run/example_columns.hpp"
#include "support/model_builder.hpp"
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
