#pragma once
// The statistics of `attnscan compare` and `heads --ci bootstrap`, written out in full so that each
// can be checked against scipy (tests/analysis): Student t distribution, paired and Welch t-tests,
// Spearman correlation, Benjamini-Hochberg, and seeded resampling (sign-flip and label permutations,
// percentile bootstrap). A statistic that cannot be computed is NaN with a reason, never a guess.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace attnscan::stats {

// Student t with `df` degrees of freedom: P(T <= t), and the quantile for probability p.
double t_cdf(double t, double df);
double t_quantile(double p, double df);

struct TestResult {
  std::size_t n = 0;                        // pairs, or n_a + n_b
  double mean_a = NAN, mean_b = NAN;
  double effect = NAN;                      // mean difference (paired), difference of means (Welch), rho (Spearman)
  double ci_low = NAN, ci_high = NAN;       // 95% CI of `effect`
  double t = NAN, df = NAN, p = NAN;        // the parametric test
  double p_permutation = NAN;               // with the resampling given
  int resamples_used = 0;                   // resamples drawn for p_permutation (fewer where sequential stopping ended it)
  double standardized = NAN;                // Cohen's d_z (paired), Hedges' g (Welch); NaN for Spearman
  std::string why_nan;                      // set when the statistic is undefined
};

// How a permutation test resamples: `resamples` draws (0: none) from `seed`. With stop_above > 0 it stops
// sequentially (Besag & Clifford 1991): once h = floor(stop_above (resamples + 1)) draws were as extreme
// as the data, the p-value over every draw, at least (h + 1) / (resamples + 1), is certain to exceed
// stop_above; resampling ends there and p is h / (draws made). Draws are made in the same order either
// way, so a test that does not stop has exactly the p-value of the full run.
struct Resampling {
  int resamples = 0;
  uint64_t seed = 1;
  double stop_above = 0;
};

// Paired: a[i] with b[i] (NaN pairs dropped). Sign-flip permutation test.
TestResult paired_test(const std::vector<double>& a, const std::vector<double>& b, const Resampling& resampling);
// Two independent groups: Welch's t-test and a label permutation test; Hedges' g.
TestResult welch_test(const std::vector<double>& a, const std::vector<double>& b, const Resampling& resampling);
// Spearman's rho of x and y (NaN pairs dropped, ties get average ranks); CI by Fisher's z; p from
// t = rho sqrt((n-2)/(1-rho^2)) with n-2 df, as scipy.stats.spearmanr.
TestResult spearman_test(const std::vector<double>& x, const std::vector<double>& y);

// Benjamini-Hochberg adjusted p-values (q); NaN p-values stay NaN and do not count as tests.
std::vector<double> benjamini_hochberg(const std::vector<double>& p);

// Percentile bootstrap 95% interval of the mean of `values` (NaN dropped) with `resamples` draws.
std::pair<double, double> bootstrap_mean_ci(const std::vector<double>& values, int resamples, uint64_t seed);
// The same for mean(a) - mean(b), each group resampled on its own.
std::pair<double, double> bootstrap_difference_ci(const std::vector<double>& a, const std::vector<double>& b, int resamples,
                                                  uint64_t seed);

}  // namespace attnscan::stats
