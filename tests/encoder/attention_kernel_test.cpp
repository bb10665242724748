// kernels::attend_head against a double-precision reference written out loop by loop (std::exp in double),
// each body the CPU can run; the AVX2 body against the AVX-512 one, bit for bit.
#include "encoder/attention_kernel.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <limits>
#include <random>
#include <vector>

#include "support/scoped_env.hpp"

namespace attnscan::kernels {
namespace {

TEST(SoftmaxExp, WithinItsBoundDownToTheSmallestNormalAndZeroBelow) {
  double worst = 0;
  for (int i = 0; i <= 4'000'000; ++i) {
    const float x = -87.3f * static_cast<float>(i) / 4'000'000.0f;
    const double exact = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(static_cast<double>(softmax_exp(x)) - exact) / exact);
  }
  EXPECT_LE(worst, 4e-7);
  EXPECT_EQ(softmax_exp(0.0f), 1.0f);
  EXPECT_EQ(softmax_exp(-87.31f), 0.0f);
  EXPECT_EQ(softmax_exp(-1e30f), 0.0f);
  EXPECT_EQ(softmax_exp(std::numeric_limits<float>::lowest()), 0.0f);
}

// One head of n tokens whose q, k and v rows of d start `ld` floats apart in qkv, into probs.
HeadAttention head_over(const std::vector<float>& qkv, int64_t n, int64_t d, int64_t ld, std::vector<float>& probs,
                        int64_t ld_probs) {
  HeadAttention h;
  h.q = qkv.data();
  h.k = qkv.data() + d;
  h.v = qkv.data() + 2 * d;
  h.ld_qkv = ld;
  h.probs = probs.data();
  h.ld_probs = ld_probs;
  h.n = n;
  h.d = d;
  return h;
}

struct Reference {
  std::vector<double> probs, ctx;  // n x n, n x d
};

Reference reference(const std::vector<float>& qkv, const std::vector<float>& bias, int64_t n, int64_t d, int64_t ld,
                    Scaling scaling) {
  Reference r{std::vector<double>(static_cast<std::size_t>(n * n)), std::vector<double>(static_cast<std::size_t>(n * d))};
  const double scale = scaling == Scaling::MultiplyScores ? std::pow(static_cast<double>(d), -0.5) : 1 / std::sqrt(static_cast<double>(d));
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> s(static_cast<std::size_t>(n));
    double max = -1e300, sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0;
      for (int64_t t = 0; t < d; ++t)
        dot += static_cast<double>(qkv[static_cast<std::size_t>(i * ld + t)]) * qkv[static_cast<std::size_t>(j * ld + d + t)];
      s[static_cast<std::size_t>(j)] = dot * scale + (bias.empty() ? 0.0 : bias[static_cast<std::size_t>(i * n + j)]);
      max = std::max(max, s[static_cast<std::size_t>(j)]);
    }
    for (auto& v : s) sum += v = std::exp(v - max);
    for (int64_t j = 0; j < n; ++j) r.probs[static_cast<std::size_t>(i * n + j)] = s[static_cast<std::size_t>(j)] / sum;
    for (int64_t t = 0; t < d; ++t)
      for (int64_t j = 0; j < n; ++j)
        r.ctx[static_cast<std::size_t>(i * d + t)] +=
            r.probs[static_cast<std::size_t>(i * n + j)] * qkv[static_cast<std::size_t>(j * ld + 2 * d + t)];
  }
  return r;
}

// One head of n tokens laid out as the encoder's projection holds it (q | k | v | another head's columns),
// written into a padded S x S block and a context with other heads' columns: both must keep what is outside.
void check(int64_t n, int64_t d, Scaling scaling, bool with_bias, KernelIsa isa) {
  SCOPED_TRACE("n=" + std::to_string(n) + " d=" + std::to_string(d) + " scaling=" + std::to_string(static_cast<int>(scaling)) +
               " bias=" + std::to_string(with_bias) + " body=" + std::to_string(static_cast<int>(isa)));
  std::mt19937 rng(static_cast<unsigned>(n * 131 + d));
  std::normal_distribution<float> normal(0.0f, 1.5f);
  const int64_t ld = 3 * d + 5, S = n + 3, ld_ctx = d + 7;
  std::vector<float> qkv(static_cast<std::size_t>(n * ld)), bias;
  for (auto& v : qkv) v = normal(rng);
  if (with_bias) {
    bias.resize(static_cast<std::size_t>(n * n));
    for (auto& v : bias) v = normal(rng);
  }
  constexpr float kUntouched = -7.0f;
  std::vector<float> probs(static_cast<std::size_t>(S * S), kUntouched), ctx(static_cast<std::size_t>(n * ld_ctx), kUntouched);
  HeadAttention h = head_over(qkv, n, d, ld, probs, S);
  if (with_bias) h.bias = bias.data(), h.ld_bias = n;
  h.ctx = ctx.data();
  h.ld_ctx = ld_ctx;
  attend_head_with(h, scaling, isa);
  const Reference r = reference(qkv, bias, n, d, ld, scaling);
  double worst_p = 0, worst_c = 0;
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = 0; j < S; ++j) {
      const float got = probs[static_cast<std::size_t>(i * S + j)];
      if (i < n && j < n)
        worst_p = std::max(worst_p, std::abs(got - r.probs[static_cast<std::size_t>(i * n + j)]));
      else
        ASSERT_EQ(got, kUntouched) << "outside the n x n block at " << i << "," << j;
    }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t t = 0; t < ld_ctx; ++t) {
      const float got = ctx[static_cast<std::size_t>(i * ld_ctx + t)];
      if (t < d)
        worst_c = std::max(worst_c, std::abs(got - r.ctx[static_cast<std::size_t>(i * d + t)]));
      else
        ASSERT_EQ(got, kUntouched) << "another head's column " << t << " of row " << i;
    }
  EXPECT_LE(worst_p, 1e-6);
  EXPECT_LE(worst_c, 1e-5);
}

constexpr KernelIsa kBodies[] = {KernelIsa::Plain, KernelIsa::Avx2, KernelIsa::Avx512};

class EachBody : public ::testing::TestWithParam<KernelIsa> {};

TEST_P(EachBody, EqualsTheDoubleReferenceForEveryScalingWithAndWithoutBias) {
  const KernelIsa isa = GetParam();
  if (!cpu_has(isa)) GTEST_SKIP() << "this CPU lacks body " << kernel_isa_name(isa) << "'s instruction set";
  for (int64_t n : {1, 2, 15, 16, 17, 50, 128})
    for (int64_t d : {8, 24, 32, 64})
      for (Scaling s : {Scaling::DivideScores, Scaling::DivideQueries, Scaling::MultiplyScores})
        for (bool bias : {false, true}) check(n, d, s, bias, isa);
}

INSTANTIATE_TEST_SUITE_P(AttendHead, EachBody, ::testing::ValuesIn(kBodies),
                         [](const ::testing::TestParamInfo<KernelIsa>& info) { return kernel_isa_name(info.param); });

// The AVX2 body holds 16 floats as two halves; each lane sees the AVX-512 body's operations in its order.
TEST(AttendHead, TheAvx2BodyGivesTheAvx512BodysNumbersBitForBit) {
  if (!cpu_has(KernelIsa::Avx512)) GTEST_SKIP() << "this CPU has no AVX-512 to compare the AVX2 body with";
  for (int64_t n : {1, 7, 16, 17, 33, 52, 100, 140})
    for (int64_t d : {8, 24, 32, 64})
      for (Scaling s : {Scaling::DivideScores, Scaling::DivideQueries, Scaling::MultiplyScores}) {
        std::mt19937 rng(static_cast<unsigned>(n * 7 + d));
        std::normal_distribution<float> normal(0.0f, 2.5f);
        const int64_t ld = 3 * d + 5;
        std::vector<float> qkv(static_cast<std::size_t>(n * ld)), bias(static_cast<std::size_t>(n * n));
        for (auto& v : qkv) v = normal(rng);
        for (auto& v : bias) v = normal(rng);
        bias[0] = std::numeric_limits<float>::lowest();
        std::vector<float> probs[2], ctx[2];
        for (int k = 0; k < 2; ++k) {
          probs[k].assign(static_cast<std::size_t>(n * n), 0.0f);
          ctx[k].assign(static_cast<std::size_t>(n * d), 0.0f);
          HeadAttention h = head_over(qkv, n, d, ld, probs[k], n);
          h.bias = bias.data(), h.ld_bias = n, h.ctx = ctx[k].data(), h.ld_ctx = d;
          attend_head_with(h, s, k == 0 ? KernelIsa::Avx512 : KernelIsa::Avx2);
        }
#if defined(__SANITIZE_ADDRESS__)
        // A sanitizer's build fuses multiplies and adds where its instrumented code lets the compiler, not
        // alike in the two bodies: there each is within its bound of the double reference (check() above), so
        // they agree within twice that (measured 1.04e-6 on a probability).
        for (std::size_t i = 0; i < probs[0].size(); ++i) ASSERT_NEAR(probs[0][i], probs[1][i], 2e-6) << n << " " << d;
        for (std::size_t i = 0; i < ctx[0].size(); ++i) ASSERT_NEAR(ctx[0][i], ctx[1][i], 2e-5) << n << " " << d;
#else
        ASSERT_EQ(std::memcmp(probs[0].data(), probs[1].data(), probs[0].size() * sizeof(float)), 0) << n << " " << d;
        ASSERT_EQ(std::memcmp(ctx[0].data(), ctx[1].data(), ctx[0].size() * sizeof(float)), 0) << n << " " << d;
#endif
      }
}

TEST(KernelIsa, TheWidestBodyTheCpuHasAtMostTheLimitInTheEnvironment) {
  attnscan::test::ScopedEnv limit("ATTNSCAN_MAX_CPU_ISA", std::nullopt);
  const KernelIsa widest = kernel_isa();
  EXPECT_TRUE(cpu_has(widest));
  for (KernelIsa wider : kBodies)
    if (wider > widest) EXPECT_FALSE(cpu_has(wider)) << kernel_isa_name(wider);
  limit.set("plain");
  EXPECT_EQ(kernel_isa(), KernelIsa::Plain);
  limit.set("AVX2");
  EXPECT_EQ(kernel_isa(), std::min(widest, KernelIsa::Avx2));
  limit.set("sse");
  try {
    kernel_isa();
    ADD_FAILURE() << "an unknown limit was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "ATTNSCAN_MAX_CPU_ISA='sse': expected avx512, avx2 or plain");
  }
}

TEST(AttendHead, AMaskedKeyWeighsExactlyZero) {
  const int64_t n = 20, d = 8;
  std::vector<float> qkv(static_cast<std::size_t>(n * 3 * d), 0.25f), bias(static_cast<std::size_t>(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i) bias[static_cast<std::size_t>(i * n + (i + 1) % n)] = std::numeric_limits<float>::lowest();
  std::vector<float> probs(static_cast<std::size_t>(n * n));
  HeadAttention h = head_over(qkv, n, d, 3 * d, probs, n);
  h.bias = bias.data();
  h.ld_bias = n;
  attend_head(h, Scaling::DivideScores);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(probs[static_cast<std::size_t>(i * n + (i + 1) % n)], 0.0f);
    EXPECT_NEAR(probs[static_cast<std::size_t>(i * n + i)], 1.0 / (n - 1), 1e-7);
  }
}

}  // namespace
}  // namespace attnscan::kernels
