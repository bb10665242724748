// The examples a detector worker reads back from shared memory are the ones the host wrote: every
// token field, roles, sentences and type ids included, and the attention.
#include <gtest/gtest.h>

#include "plugin_host/example_wire.hpp"

using namespace attnscan;

namespace {

// A RoBERTa-template pair with every role, types all 0 so that sentence and type_id differ.
sdk::Example roberta_example(std::vector<float>& attention) {
  using sdk::TokenRole;
  sdk::Example e;
  e.id = "row-7";
  e.tokens = {{"<s>", 0, TokenRole::Begin, 0, 0, -1, "<s>"},
              {"straw", 11, TokenRole::Content, 0, 0, 0, "strawberries"},
              {"##berries", 12, TokenRole::Content, 0, 0, 0, "strawberries"},
              {"<mask>", 4, TokenRole::SpecialInText, 0, 0, 1, "<mask>"},
              {"</s>", 2, TokenRole::Separator, 0, 0, -1, "</s>"},
              {"</s>", 2, TokenRole::Separator, 1, 0, -1, "</s>"},
              {"ok", 13, TokenRole::Content, 1, 0, 0, "ok"},
              {"</s>", 2, TokenRole::Separator, 1, 0, -1, "</s>"},
              {"<pad>", 1, TokenRole::Padding, 1, 1, -1, "<pad>"}};
  e.layers = 2;
  e.heads = 3;
  e.key_ranges = {{}, {4, 4}};  // a global and a sliding-window layer
  const std::size_t n = e.size();
  attention.resize(static_cast<std::size_t>(e.layers * e.heads) * n * n);
  for (std::size_t i = 0; i < attention.size(); ++i) attention[i] = static_cast<float>(i) / 1024.0f;
  e.attention = attention.data();
  return e;
}

void expect_same_token(const sdk::Token& got, const sdk::Token& want, std::size_t t) {
  EXPECT_EQ(got.text, want.text) << t;
  EXPECT_EQ(got.id, want.id) << t;
  EXPECT_EQ(got.role, want.role) << t;
  EXPECT_EQ(got.sentence, want.sentence) << t;
  EXPECT_EQ(got.type_id, want.type_id) << t;
  EXPECT_EQ(got.word_index, want.word_index) << t;
  EXPECT_EQ(got.word, want.word) << t;
}

}  // namespace

TEST(ExampleWire, RoundTripKeepsRolesSentencesAndTypeIds) {
  std::vector<float> attention_a, attention_b;
  sdk::Example a = roberta_example(attention_a), b = roberta_example(attention_b);
  b.id = "row-8";
  b.tokens.resize(3);  // another length: each example's attention is sized by its own tokens
  b.layers = 1;
  b.heads = 1;
  const std::vector<sdk::Example> batch = {a, b};
  std::vector<uint64_t> buffer((worker::encoded_size(batch, {}) + 7) / 8);  // 8-byte aligned, as shared memory is
  auto* data = reinterpret_cast<uint8_t*>(buffer.data());
  worker::encode_batch(data, batch, {});
  const auto decoded = worker::decode_batch(data, batch.size());
  ASSERT_EQ(decoded.size(), 2u);
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const sdk::Example& want = batch[k];
    ASSERT_EQ(decoded[k].example.size(), 1u);
    const sdk::Example& got = decoded[k].example[0];
    EXPECT_EQ(decoded[k].mixing[0].alti, nullptr);
    EXPECT_EQ(got.id, want.id);
    EXPECT_EQ(got.layers, want.layers);
    EXPECT_EQ(got.heads, want.heads);
    EXPECT_EQ(got.key_ranges, want.key_ranges);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t t = 0; t < want.size(); ++t) expect_same_token(got.tokens[t], want.tokens[t], t);
    const std::size_t values = static_cast<std::size_t>(want.layers * want.heads) * want.size() * want.size();
    EXPECT_EQ(std::vector<float>(got.attention, got.attention + values),
              std::vector<float>(want.attention, want.attention + values));
  }
}

// Attention given as the forward's padded blocks (each head's n x n block at the top left of an S x S
// one) reaches the worker as the same n x n blocks end to end.
TEST(ExampleWire, PaddedBlocksArriveAsTheirUnpaddedValues) {
  std::vector<float> contiguous;
  sdk::Example e = roberta_example(contiguous);
  const std::size_t n = e.size(), S = n + 5, blocks = static_cast<std::size_t>(e.layers * e.heads);
  std::vector<float> padded(blocks * S * S, -1.0f);  // -1: padding, never to arrive
  for (std::size_t b = 0; b < blocks; ++b)
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t c = 0; c < n; ++c) padded[(b * S + r) * S + c] = contiguous[(b * n + r) * n + c];
  sdk::Example from_padded = e;
  from_padded.attention = padded.data();
  const std::vector<sdk::Example> batch = {e, from_padded};
  const std::vector<int64_t> strides = {0, static_cast<int64_t>(S)};
  std::vector<uint64_t> buffer((worker::encoded_size(batch, {}) + 7) / 8);
  auto* data = reinterpret_cast<uint8_t*>(buffer.data());
  worker::encode_batch(data, batch, {}, strides);
  const auto decoded = worker::decode_batch(data, batch.size());
  ASSERT_EQ(decoded.size(), 2u);
  for (const auto& d : decoded)
    EXPECT_EQ(std::vector<float>(d.example[0].attention, d.example[0].attention + blocks * n * n), contiguous);
}
