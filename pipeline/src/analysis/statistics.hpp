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
  double standardized = NAN;                // Cohen's d_z (paired), Hedges' g (Welch); NaN for Spearman
  std::string why_nan;                      // set when the statistic is undefined
};

// Paired: a[i] with b[i] (NaN pairs dropped). Sign-flip permutation over `resamples` (0: none).
TestResult paired_test(const std::vector<double>& a, const std::vector<double>& b, int resamples, uint64_t seed);
// Two independent groups: Welch's t-test and a label permutation test; Hedges' g.
TestResult welch_test(const std::vector<double>& a, const std::vector<double>& b, int resamples, uint64_t seed);
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
