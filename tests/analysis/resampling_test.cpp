// compare's resampling against the standard library it replaced: MersenneTwister64 against
// std::mt19937_64, its draws against std::uniform_int_distribution, and the permutation p-values and
// bootstrap intervals against the same tests written with those (as they were before), seed for seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "analysis/fast_xlogx.hpp"
#include "analysis/mersenne_twister.hpp"
#include "analysis/statistics.hpp"

namespace attnscan::stats {
namespace {

TEST(MersenneTwister64, IsStdMt19937_64) {
  for (uint64_t seed : {0ULL, 1ULL, 5489ULL, 0xdeadbeefcafef00dULL}) {
    std::mt19937_64 want(seed);
    MersenneTwister64 got(seed);
    for (int i = 0; i < 100000; ++i) ASSERT_EQ(got(), want()) << "seed " << seed << ", draw " << i;
  }
}

TEST(MersenneTwister64, DrawsAreUniformIntDistributions) {
  // Small ranges, every size of a permutation, and ranges just above 2^63 where half the draws are rejected.
  const std::vector<uint64_t> ranges = {1, 2, 3, 7, 1000, 99991, (1ULL << 32) + 1, (1ULL << 63) + 1, (1ULL << 63) + 12345,
                                        ~0ULL};
  std::mt19937_64 want(42);
  MersenneTwister64 got(42);
  for (int round = 0; round < 2000; ++round)
    for (uint64_t r : ranges)
      ASSERT_EQ(got.below(r), std::uniform_int_distribution<uint64_t>(0, r - 1)(want)) << "range " << r;
  for (uint64_t r = 1; r < 5000; ++r) ASSERT_EQ(got.below(r), std::uniform_int_distribution<std::size_t>(0, r - 1)(want));
}

TEST(MersenneTwister64, ShuffleIsFisherYatesWithUniformIntDistribution) {
  std::mt19937_64 want_rng(3);
  MersenneTwister64 got_rng(3);
  for (std::size_t n : {1, 2, 3, 311, 312, 313, 1000, 5000}) {
    std::vector<int> want(n), got(n);
    std::iota(want.begin(), want.end(), 0);
    got = want;
    for (int round = 0; round < 5; ++round) {  // from the previous round's order, as compare shuffles
      for (std::size_t i = n - 1; n > 1 && i > 0; --i) std::swap(want[i], want[std::uniform_int_distribution<std::size_t>(0, i)(want_rng)]);
      double below = 0, above = 0;
      got_rng.shuffle_and_sum(got.data(), n, n / 2, below, above);
      ASSERT_EQ(got, want) << n << " values, round " << round;
    }
  }
  EXPECT_EQ(got_rng(), want_rng());  // the same number of words drawn
}

TEST(MersenneTwister64, ShuffleAndSumShufflesAlikeAndSumsEachSideInReverse) {
  for (std::size_t n : {1, 2, 313, 5000})
    for (std::size_t split : {std::size_t{0}, std::size_t{1}, n / 3, n}) {
      std::mt19937_64 plain(11);
      MersenneTwister64 summing(11);
      std::vector<double> want(n), got(n);
      for (std::size_t i = 0; i < n; ++i) want[i] = got[i] = std::sin(static_cast<double>(i)) * 1e3 + 1 / (i + 1.0);
      for (int round = 0; round < 3; ++round) {
        for (std::size_t i = n - 1; n > 1 && i > 0; --i) std::swap(want[i], want[std::uniform_int_distribution<std::size_t>(0, i)(plain)]);
        double below = NAN, above = NAN;
        summing.shuffle_and_sum(got.data(), n, split, below, above);
        ASSERT_EQ(got, want) << n << " " << split;
        double want_below = 0, want_above = 0;
        for (std::size_t i = n; i-- > 0;) (i < split ? want_below : want_above) += want[i];
        EXPECT_EQ(below, want_below) << n << " " << split;
        EXPECT_EQ(above, want_above) << n << " " << split;
      }
      EXPECT_EQ(plain(), summing());
    }
}

// The label permutation p-value exactly as compare computed it before (std's generator and draws).
double welch_permutation_p_with_std(std::vector<double> a, std::vector<double> b, int resamples, uint64_t seed) {
  const double effect = std::accumulate(a.begin(), a.end(), 0.0) / static_cast<double>(a.size()) -
                        std::accumulate(b.begin(), b.end(), 0.0) / static_cast<double>(b.size());
  std::vector<double> pool(a);
  pool.insert(pool.end(), b.begin(), b.end());
  std::mt19937_64 rng(seed);
  const double observed = std::fabs(effect) * (1 - 1e-12);
  int count = 0;
  for (int k = 1; k <= resamples; ++k) {
    for (std::size_t i = pool.size() - 1; i > 0; --i) std::swap(pool[i], pool[std::uniform_int_distribution<std::size_t>(0, i)(rng)]);
    const double sa = std::accumulate(pool.begin(), pool.begin() + static_cast<long>(a.size()), 0.0);
    const double sb = std::accumulate(pool.begin() + static_cast<long>(a.size()), pool.end(), 0.0);
    count += std::fabs(sa / static_cast<double>(a.size()) - sb / static_cast<double>(b.size())) >= observed;
  }
  return (count + 1.0) / (resamples + 1.0);
}

double paired_permutation_p_with_std(const std::vector<double>& d, int resamples, uint64_t seed) {
  const double observed = std::fabs(std::accumulate(d.begin(), d.end(), 0.0) / static_cast<double>(d.size())) * (1 - 1e-12);
  std::mt19937_64 rng(seed);
  int count = 0;
  for (int k = 1; k <= resamples; ++k) {
    double sum = 0;
    uint64_t bits = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      if (i % 64 == 0) bits = rng();
      sum += (bits >> (i % 64)) & 1 ? d[i] : -d[i];
    }
    count += std::fabs(sum / static_cast<double>(d.size())) >= observed;
  }
  return (count + 1.0) / (resamples + 1.0);
}

// Scores as detectors make them: continuous, and discrete with many ties (where a permuted statistic can
// equal the observed one exactly).
std::vector<double> scores(std::size_t n, double shift, bool discrete, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(shift, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = discrete ? std::round(normal(rng) * 2) / 8 : normal(rng);
  return v;
}

TEST(Resampling, PermutationPValuesAreThoseOfTheStandardLibrary) {
  int compared = 0;
  for (bool discrete : {false, true})
    for (std::size_t n : {5, 40, 333, 3000})
      for (double shift : {0.0, 0.05, 0.3}) {
        const auto a = scores(n, shift, discrete, static_cast<uint32_t>(n)), b = scores(n + 7, 0, discrete, static_cast<uint32_t>(n + 1));
        const uint64_t seed = n * 31 + static_cast<uint64_t>(shift * 100) + discrete;
        const Resampling resampling{400, seed, 0};
        EXPECT_EQ(welch_test(a, b, resampling).p_permutation, welch_permutation_p_with_std(a, b, 400, seed))
            << "welch, n " << n << ", shift " << shift << (discrete ? ", ties" : "");
        const std::vector<double> zeros(a.size(), 0.0);
        EXPECT_EQ(paired_test(a, zeros, resampling).p_permutation, paired_permutation_p_with_std(a, 400, seed))
            << "paired, n " << n << ", shift " << shift << (discrete ? ", ties" : "");
        compared += 2;
      }
  EXPECT_EQ(compared, 48);
}

// The percentile bootstrap of the mean as it was drawn before.
TEST(Resampling, BootstrapIntervalIsThatOfTheStandardLibrary) {
  const auto v = scores(257, 0.2, false, 9);
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::size_t> pick(0, v.size() - 1);
  std::vector<double> means(500);
  for (auto& m : means) {
    double s = 0;
    for (std::size_t i = 0; i < v.size(); ++i) s += v[pick(rng)];
    m = s / static_cast<double>(v.size());
  }
  std::sort(means.begin(), means.end());
  const auto at = [&](double q) {
    const double pos = q * static_cast<double>(means.size() - 1);
    const auto i = static_cast<std::size_t>(pos);
    return means[i] + (pos - static_cast<double>(i)) * (means[i + 1] - means[i]);
  };
  const auto [low, high] = bootstrap_mean_ci(v, 500, 11);
  EXPECT_EQ(low, at(0.025));
  EXPECT_EQ(high, at(0.975));
}

}  // namespace
}  // namespace attnscan::stats

namespace attnscan::analysis {
namespace {

// head similarity's x ln x against the libm logarithm: every binade a mixture of float attention weights
// reaches (down to the smallest float subnormal, halved), and 0.
TEST(FastXlogx, WithinAFewUlpOfTheLibmLogarithm) {
  std::mt19937_64 rng(1);
  double worst = 0;
  for (int binade = -150; binade <= 0; ++binade)
    for (int i = 0; i < 2000; ++i) {
      const double x = std::ldexp(1 + std::uniform_real_distribution<double>(0, 1)(rng), binade - 1);
      const double want = x * std::log(x);
      worst = std::max(worst, std::fabs(fast_xlogx(x) - want) / std::max(std::fabs(want), 1e-300));
    }
  EXPECT_LE(worst, 1e-15);  // a few ulp (2.2e-16 each)
  EXPECT_EQ(fast_xlogx(0.0), 0.0);
  EXPECT_EQ(fast_xlogx(1.0), 0.0);
  std::cout << "fast_xlogx: largest relative difference from x * std::log(x) " << worst << "\n";
}

}  // namespace
}  // namespace attnscan::analysis
