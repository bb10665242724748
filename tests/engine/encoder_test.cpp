// The encoder on generated weights in the shapes of the checkpoints attnscan must load: attention
// shapes, rows summing to one, masking, and batch/padding independence.
#include <gtest/gtest.h>

#include <cmath>

#include "attnscan/encoder.hpp"
#include "attnscan/error.hpp"
#include "support/model_builder.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;

namespace {

// Max |a - b| over the real n x n block of every layer and head of example bx in x and by in y.
double max_diff(const EncoderOutput& x, int64_t bx, const EncoderOutput& y, int64_t by, int64_t n) {
  double worst = 0;
  for (int64_t l = 0; l < x.layers; ++l)
    for (int64_t h = 0; h < x.heads; ++h)
      for (int64_t q = 0; q < n; ++q)
        for (int64_t k = 0; k < n; ++k)
          worst = std::max(worst, std::fabs(double(x.attention_at(bx, l, h)[q * x.seq_len + k]) -
                                            double(y.attention_at(by, l, h)[q * y.seq_len + k])));
  return worst;
}

void check_shape(const test::ModelShape& shape, const test::BuildOptions& build) {
  auto dir = test::build_model(test::scratch_dir("enc_" + shape.name), shape, build);
  auto model = load_model(dir);
  auto tok = WordPieceTokenizer::from_model_dir(dir, model.config);
  BertEncoder enc(model, EncoderOptions{});
  Encoding long_pair = tok.encode_pair("the cat sat on the mat.", "the dog went to the store.");
  Encoding short_pair = tok.encode_pair("strawberries", "i sat");
  auto batch = TokenBatch::from_encodings({&long_pair, &short_pair}, tok.pad_id());
  auto out = enc.forward(batch, /*hidden_states=*/true);
  ASSERT_EQ(out.layers, shape.layers);
  ASSERT_EQ(out.heads, shape.heads);
  ASSERT_EQ(out.seq_len, static_cast<int64_t>(long_pair.size()));
  ASSERT_EQ(out.attention.size(), static_cast<std::size_t>(2 * shape.layers * shape.heads * out.seq_len * out.seq_len));
  ASSERT_EQ(out.hidden_states.size(), static_cast<std::size_t>((shape.layers + 1) * 2 * out.seq_len * shape.hidden));
  const int64_t n_short = static_cast<int64_t>(short_pair.size());
  for (int64_t l = 0; l < out.layers; ++l)
    for (int64_t h = 0; h < out.heads; ++h) {
      const float* a = out.attention_at(1, l, h);
      for (int64_t q = 0; q < n_short; ++q) {
        double sum = 0;
        for (int64_t k = 0; k < out.seq_len; ++k) {
          if (k >= n_short) ASSERT_EQ(a[q * out.seq_len + k], 0.0f) << "padding key got attention";
          sum += a[q * out.seq_len + k];
        }
        ASSERT_NEAR(sum, 1.0, 1e-5) << shape.name << " layer " << l << " head " << h << " query " << q;
      }
    }
  // The short pair alone gives bit-identical attention to the same pair inside a padded batch.
  auto alone = enc.forward(TokenBatch::from_encodings({&short_pair}, tok.pad_id()));
  EXPECT_EQ(max_diff(out, 1, alone, 0, n_short), 0.0) << shape.name;
}

}  // namespace

TEST(EncoderShapes, MiniLM) { check_shape(test::minilm_shape(), {}); }

TEST(EncoderShapes, BertBaseUncasedWithMaskedLmHeads) {
  test::BuildOptions o;
  o.prefix = "bert.";
  o.task_heads = true;
  check_shape(test::bert_base_uncased_shape(), o);
}

TEST(EncoderShapes, BertLargeCasedInBf16) {
  test::BuildOptions o;
  o.dtype = "BF16";
  check_shape(test::bert_large_cased_shape(), o);
}

TEST(EncoderShapes, BertBaseMultilingualCasedInFp16) {
  test::BuildOptions o;
  o.dtype = "F16";
  check_shape(test::bert_base_multilingual_cased_shape(), o);
}

TEST(Encoder, Bf16StaysCloseToFp32) {
  auto dir = test::build_model(test::scratch_dir("enc_bf16"), test::tiny_shape());
  auto model = load_model(dir);
  auto tok = WordPieceTokenizer::from_model_dir(dir, model.config);
  auto e = tok.encode_pair("the cat sat on the mat.", "the dog went to the store.");
  auto batch = TokenBatch::from_encodings({&e}, tok.pad_id());
  EncoderOptions bf16;
  bf16.precision = Precision::BF16;
  auto a = BertEncoder(model, EncoderOptions{}).forward(batch);
  auto b = BertEncoder(model, bf16).forward(batch);
  double d = max_diff(a, 0, b, 0, static_cast<int64_t>(e.size()));
  EXPECT_GT(d, 0.0);  // really a different computation
  EXPECT_LT(d, 0.02);
}

TEST(Encoder, RejectsBadInput) {
  auto dir = test::build_model(test::scratch_dir("enc_bad"), test::tiny_shape());
  auto model = load_model(dir);
  BertEncoder enc(model, EncoderOptions{});
  TokenBatch b;
  b.batch = 1;
  b.seq_len = 2;
  b.input_ids = {2, 999};
  b.token_type_ids = {0, 0};
  b.lengths = {2};
  EXPECT_THROW(enc.forward(b), Error);
  b.input_ids = {2, 3};
  b.seq_len = 40;  // beyond max_position_embeddings 32
  b.input_ids.resize(40, 0);
  b.token_type_ids.resize(40, 0);
  EXPECT_THROW(enc.forward(b), Error);
  EncoderOptions cuda;
  cuda.device = DeviceSpec::parse("cuda:0");
  EXPECT_THROW(BertEncoder(model, cuda), Error);  // this LibTorch has no CUDA
  EXPECT_THROW(DeviceSpec::parse("tpu"), Error);
}
