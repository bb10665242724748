// kernels::PackedLinear against x W^T + b in double, written out loop by loop; in bf16 the reference takes
// the inputs and weights rounded to bf16 by hand (bit arithmetic, not the kernel's own function).
#include "encoder/onednn_linear.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "encoder/platform.hpp"

namespace attnscan::kernels {
namespace {

std::vector<float> random_values(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

// bf16 by round-to-nearest-even on the bits: add half an ulp of bf16 (ties to even), drop 16 bits.
double bf16_rounded(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint32_t lsb = (u >> 16) & 1u;
  u = ((u + 0x7fffu + lsb) >> 16) << 16;
  float r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

// Largest |got - want| / (1 + |want|) over all outputs of x W^T + b.
double worst_error(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b, int64_t rows,
                   int64_t out, int64_t in, bool bf16, const std::vector<float>& got) {
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double want = b[static_cast<std::size_t>(o)];
      for (int64_t i = 0; i < in; ++i) {
        const float xv = x[static_cast<std::size_t>(r * in + i)], wv = w[static_cast<std::size_t>(o * in + i)];
        want += bf16 ? bf16_rounded(xv) * bf16_rounded(wv) : static_cast<double>(xv) * wv;
      }
      const double err = std::abs(got[static_cast<std::size_t>(r * out + o)] - want) / (1.0 + std::abs(want));
      worst = std::max(worst, err);
    }
  return worst;
}

void expect_matches_reference(bool bf16) {
  const int64_t out = 96, in = 200;  // not multiples of the kernels' blocks
  const auto w = random_values(static_cast<std::size_t>(out * in), 1), b = random_values(static_cast<std::size_t>(out), 2);
  const PackedLinear linear(w.data(), b.data(), out, in, bf16);
  for (int64_t rows : {1, 7, 48, 256, 333}) {  // each a new primitive; 48 again below from the cache
    const auto x = random_values(static_cast<std::size_t>(rows * in), 3 + static_cast<uint32_t>(rows));
    const int64_t computed = linear.rows_computed(rows);
    EXPECT_EQ(computed, bf16 ? (rows + 15) / 16 * 16 : rows);
    std::vector<float> y(static_cast<std::size_t>(computed * out));
    linear.apply(x.data(), rows, y.data());
    // fp32 accumulation over 200 terms of size ~1: ~1e-5 relative; bf16 rounds only the inputs here.
    EXPECT_LE(worst_error(x, w, b, rows, out, in, bf16, y), 2e-5) << rows << " rows";
    for (int64_t r = rows; r < computed; ++r)  // the block's extra rows are zeros in: the bias out
      for (int64_t o = 0; o < out; ++o)
        EXPECT_EQ(y[static_cast<std::size_t>(r * out + o)], b[static_cast<std::size_t>(o)]);
  }
}

bool bf16_runs_here() { return compute_platform().bf16 != Bf16Support::Unavailable; }

TEST(PackedLinear, Fp32MatchesDoubleReference) { expect_matches_reference(false); }

TEST(PackedLinear, Bf16MatchesReferenceOnBf16RoundedOperands) {
  if (!bf16_runs_here()) GTEST_SKIP() << compute_platform().bf16_refusal();
  expect_matches_reference(true);
}

TEST(PackedLinear, NoBiasAndUnpackedWeights) {
  const int64_t out = 5, in = 3;
  const std::vector<float> w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 1.00390625f};
  const PackedLinear linear(w.data(), nullptr, out, in, false);
  const std::vector<float> x = {1, 0, -1};
  std::vector<float> y(out);
  linear.apply(x.data(), 1, y.data());
  EXPECT_EQ(y, (std::vector<float>{-2, -2, -2, -2, 13 - 1.00390625f}));
  EXPECT_EQ(linear.unpacked_weight(), w);
  if (!bf16_runs_here()) GTEST_SKIP() << compute_platform().bf16_refusal();
  const PackedLinear rounded(w.data(), nullptr, out, in, true);
  auto expect = w;
  expect.back() = 1.0f;  // 1 + 2^-8 is halfway between bf16's 1 and 1 + 2^-7: to even, 1
  EXPECT_EQ(rounded.unpacked_weight(), expect);
}

// Past the shapes kept the least recently used one goes: a row count used between the others stays (no new
// primitive for it), an old one is created again, and each gives the numbers it gave before.
TEST(PackedLinear, PastTheCacheTheLeastRecentlyUsedShapeGoesAndNumbersStay) {
  const int64_t out = 16, in = 8, most = static_cast<int64_t>(kLinearShapesKept) + 40;
  const auto w = random_values(static_cast<std::size_t>(out * in), 21), b = random_values(static_cast<std::size_t>(out), 22);
  const auto x = random_values(static_cast<std::size_t>(most * in), 23);
  const PackedLinear linear(w.data(), b.data(), out, in, false);
  const auto apply = [&](int64_t rows) {
    std::vector<float> y(static_cast<std::size_t>(rows * out));
    linear.apply(x.data(), rows, y.data());
    return y;
  };
  const auto hot = apply(5), first = apply(1);
  for (int64_t rows = 2; rows <= most; ++rows) {
    if (rows == 5) continue;
    apply(rows);
    const std::size_t before = linear_primitives_created();
    EXPECT_EQ(apply(5), hot) << "after " << rows << " rows";
    EXPECT_EQ(linear_primitives_created(), before) << "the shape used a moment ago was created again (" << rows << ")";
  }
  const std::size_t before = linear_primitives_created();
  EXPECT_EQ(apply(1), first);
  EXPECT_EQ(linear_primitives_created(), before + 1) << "1 row was used least recently: dropped, and created again";
  EXPECT_LE(worst_error(x, w, b, 1, out, in, false, first), 2e-5);
}

// Each epilogue against its formula applied in double to the fp32 kernel's plain output: the fused pass
// must change nothing but the epilogue (oneDNN's erf and tanh are approximations: within 2e-6 here).
void expect_epilogues_match(bool bf16) {
  const int64_t out = 96, in = 200, rows = 37;
  const auto w = random_values(static_cast<std::size_t>(out * in), 11), b = random_values(static_cast<std::size_t>(out), 12);
  const auto x = random_values(static_cast<std::size_t>(rows * in), 13);
  const auto residual = random_values(static_cast<std::size_t>(rows * out), 14);
  const PackedLinear linear(w.data(), b.data(), out, in, bf16);
  const auto computed = static_cast<std::size_t>(linear.rows_computed(rows));
  std::vector<float> plain(computed * static_cast<std::size_t>(out));
  linear.apply(x.data(), rows, plain.data());
  const double root_half = std::sqrt(0.5), root_2_over_pi = std::sqrt(2 / M_PI);
  const auto want_of = [&](Epilogue e, double v, std::size_t i) -> double {
    switch (e) {
      case Epilogue::None: return v;
      case Epilogue::GeluErf: return 0.5 * v * (1 + std::erf(v * root_half));
      case Epilogue::GeluTanh: return 0.5 * v * (1 + std::tanh(root_2_over_pi * (v + 0.044715 * v * v * v)));
      case Epilogue::Relu: return std::max(v, 0.0);
      case Epilogue::AddResidual: return static_cast<double>(static_cast<float>(v) + residual[i]);  // one fp32 add
    }
    return NAN;
  };
  for (Epilogue e : {Epilogue::GeluErf, Epilogue::GeluTanh, Epilogue::Relu, Epilogue::AddResidual}) {
    std::vector<float> y(plain.size(), NAN);
    if (e == Epilogue::AddResidual) std::copy(residual.begin(), residual.end(), y.begin());
    linear.apply(x.data(), rows, y.data(), e);
    double worst = 0;
    for (std::size_t i = 0; i < residual.size(); ++i)
      worst = std::max(worst, std::abs(y[i] - want_of(e, plain[i], i)) / (1 + std::abs(want_of(e, plain[i], i))));
    // AVX2's kernel adds the residual before the bias (one rounding apart); AVX-512's after, exactly.
    EXPECT_LE(worst, e == Epilogue::Relu ? 0.0 : e == Epilogue::AddResidual ? 5e-7 : 2e-6) << "epilogue " << static_cast<int>(e);
  }
}

TEST(PackedLinear, EpiloguesEqualTheirFormulaOnThePlainOutput) { expect_epilogues_match(false); }

TEST(PackedLinear, Bf16EpiloguesEqualTheirFormulaOnThePlainOutput) {
  if (!bf16_runs_here()) GTEST_SKIP() << compute_platform().bf16_refusal();
  expect_epilogues_match(true);
}

// One bf16 layer handing its output to the next: the kernel's rounding to bf16 is the fp32 output rounded to
// nearest even (a different blocking may move an fp32 accumulator by an ulp: at most 1 bf16 ulp, rarely),
// and the next layer reads those bits exactly as it reads fp32 rows it rounds itself.
TEST(PackedLinear, Bf16HandOffIsTheRoundedFp32Output) {
  if (!bf16_runs_here()) GTEST_SKIP() << compute_platform().bf16_refusal();
  const int64_t in = 200, mid = 96, out = 64, rows = 37;
  const auto w1 = random_values(static_cast<std::size_t>(mid * in), 21), b1 = random_values(static_cast<std::size_t>(mid), 22);
  const auto w2 = random_values(static_cast<std::size_t>(out * mid), 23), b2 = random_values(static_cast<std::size_t>(out), 24);
  const auto x = random_values(static_cast<std::size_t>(rows * in), 25);
  const PackedLinear first(w1.data(), b1.data(), mid, in, true), second(w2.data(), b2.data(), out, mid, true);
  const auto padded = static_cast<std::size_t>(first.rows_computed(rows));
  std::vector<float> fp32(padded * static_cast<std::size_t>(mid));
  first.apply(x.data(), rows, fp32.data(), Epilogue::GeluErf);
  std::vector<uint16_t> handed(fp32.size());
  first.apply_to_bf16(x.data(), rows, handed.data(), Epilogue::GeluErf);
  std::size_t exact = 0, n = static_cast<std::size_t>(rows * mid);
  for (std::size_t i = 0; i < n; ++i) {
    const int diff = static_cast<int>(handed[i]) - static_cast<int>(to_bf16(fp32[i]));
    EXPECT_LE(std::abs(diff), 1) << i;
    exact += diff == 0;
  }
  EXPECT_GE(exact, n * 99 / 100);
  std::vector<float> widened(handed.size());
  for (std::size_t i = 0; i < handed.size(); ++i) widened[i] = from_bf16(handed[i]);
  std::vector<float> from_bits(padded * static_cast<std::size_t>(out)), from_floats(from_bits.size());
  second.apply_from_bf16(handed.data(), rows, from_bits.data());
  second.apply(widened.data(), rows, from_floats.data());
  EXPECT_TRUE(std::equal(from_bits.begin(), from_bits.begin() + rows * out, from_floats.begin()));
  std::cout << exact << " of " << n << " handed-off values equal the fp32 output rounded to bf16\n";
}

TEST(PackedLinear, Bf16RoundsToNearestEven) {
  EXPECT_EQ(from_bf16(to_bf16(1.00390625f)), 1.0f);          // tie, down to even
  EXPECT_EQ(from_bf16(to_bf16(1.01171875f)), 1.015625f);     // tie, up to even
  EXPECT_EQ(from_bf16(to_bf16(std::nextafter(1.00390625f, 2.0f))), 1.0078125f);  // just above the tie
  EXPECT_EQ(from_bf16(to_bf16(-3.0f)), -3.0f);
  EXPECT_TRUE(std::isinf(from_bf16(to_bf16(std::numeric_limits<float>::max()))));  // rounds past bf16's largest
  EXPECT_TRUE(std::isnan(from_bf16(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(from_bf16(to_bf16(-std::numeric_limits<float>::signaling_NaN()))));
}

TEST(PackedLinear, ConcurrentCallsAgreeWithOneCall) {
  const int64_t out = 64, in = 64, rows = 40;
  const auto w = random_values(static_cast<std::size_t>(out * in), 7), x = random_values(static_cast<std::size_t>(rows * in), 8);
  const PackedLinear linear(w.data(), nullptr, out, in, false);
  std::vector<float> alone(static_cast<std::size_t>(rows * out));
  linear.apply(x.data(), rows, alone.data());
  std::vector<std::vector<float>> got(4, std::vector<float>(alone.size()));
  std::vector<std::thread> threads;
  for (auto& g : got)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) linear.apply(x.data(), rows - (i % 3), g.data());
      linear.apply(x.data(), rows, g.data());
    });
  for (auto& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, alone);
}

}  // namespace
}  // namespace attnscan::kernels
