#include "analysis/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "analysis/mersenne_twister.hpp"

namespace attnscan::stats {

namespace {

// Continued fraction of the regularized incomplete beta function (modified Lentz).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 1000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < kEps) break;
  }
  return h;
}

// I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

// Two-sided p of a t statistic.
double two_sided_p(double t, double df) {
  if (std::isinf(t)) return 0;
  return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

struct Moments {
  std::size_t n = 0;
  double mean = NAN, var = NAN;  // sample variance (ddof 1)
};

Moments moments(const std::vector<double>& v) {
  Moments m;
  m.n = v.size();
  if (m.n == 0) return m;
  m.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(m.n);
  if (m.n < 2) return m;
  double ss = 0;
  for (double x : v) ss += (x - m.mean) * (x - m.mean);
  m.var = ss / static_cast<double>(m.n - 1);
  return m;
}

std::vector<double> defined(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v)
    if (!std::isnan(x)) out.push_back(x);
  return out;
}

// Average ranks (1-based), ties sharing the mean of their positions.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = rank;
    i = j + 1;
  }
  return r;
}

// The sums of x[0, na) and x[na, na + nb), each added left to right (as std::accumulate adds) but the two
// interleaved, so that each addition's latency hides the other's.
std::pair<double, double> sums_in_order(const double* x, std::size_t na, std::size_t nb) {
  const double* y = x + na;
  double sa = 0, sb = 0;
  const std::size_t both = std::min(na, nb);
  for (std::size_t i = 0; i < both; ++i) sa += x[i], sb += y[i];
  for (std::size_t i = both; i < na; ++i) sa += x[i];
  for (std::size_t i = both; i < nb; ++i) sb += y[i];
  return {sa, sb};
}

// How far |sa/na - sb/nb| can move when the group sums of `pool` are added in another order (each sum
// is off by at most gamma_(n-1) * sum |x| either way), with the divisions' and subtraction's roundings and a
// factor 2 to spare. A permuted statistic farther than this from the observed one is on the same side
// of it whichever way it was summed. Infinite (never settled) when the scores are not all finite.
double reversal_error_bound(const std::vector<double>& pool, double na, double nb) {
  double total = 0;
  for (double x : pool) total += std::fabs(x);
  const double u = std::numeric_limits<double>::epsilon() / 2, n = static_cast<double>(pool.size());
  const double gamma = n * u / (1 - n * u);
  const double bound = 2 * (2 * gamma + 4 * u) * total * (1 / na + 1 / nb);
  return std::isfinite(bound) ? bound : INFINITY;
}

// Counts resamples as extreme as the data: p = (count + 1) / (resamples + 1), never 0, as a permutation
// p-value must not be; or, stopped sequentially (Resampling), count / draws made.
class PermutationCount {
 public:
  explicit PermutationCount(const Resampling& r)
      : resamples_(r.resamples),
        limit_(r.stop_above > 0 ? static_cast<std::size_t>(std::floor(r.stop_above * (r.resamples + 1.0))) : 0) {}
  // Adds draw number `drawn` (1-based); false once resampling may stop.
  bool add(bool as_extreme, int drawn) {
    count_ += as_extreme;
    drawn_ = drawn;
    return !(limit_ > 0 && count_ >= limit_ && drawn < resamples_);
  }
  void finish(TestResult& r) const {
    r.resamples_used = drawn_;
    r.p_permutation = drawn_ < resamples_ ? static_cast<double>(count_) / drawn_
                                          : (static_cast<double>(count_) + 1) / (static_cast<double>(resamples_) + 1);
  }

 private:
  int resamples_;
  std::size_t limit_, count_ = 0;
  int drawn_ = 0;
};

}  // namespace

double t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return NAN;
  const double half = 0.5 * two_sided_p(t, df);
  return t >= 0 ? 1 - half : half;
}

double t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0)) return NAN;
  double lo = -1, hi = 1;
  while (t_cdf(lo, df) > p) lo *= 2;
  while (t_cdf(hi, df) < p) hi *= 2;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

TestResult paired_test(const std::vector<double>& a, const std::vector<double>& b, const Resampling& resampling) {
  TestResult r;
  std::vector<double> d, ka, kb;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!std::isnan(a[i]) && !std::isnan(b[i])) d.push_back(a[i] - b[i]), ka.push_back(a[i]), kb.push_back(b[i]);
  r.n = d.size();
  r.mean_a = moments(ka).mean;
  r.mean_b = moments(kb).mean;
  const Moments m = moments(d);
  r.effect = m.mean;
  if (r.n < 2) {
    r.why_nan = "fewer than 2 examples where both files define the score";
    return r;
  }
  const double sd = std::sqrt(m.var);
  if (sd == 0) {
    r.ci_low = r.ci_high = m.mean;
    r.why_nan = "the paired differences do not vary (identical scores?)";
    return r;
  }
  const double se = sd / std::sqrt(static_cast<double>(r.n));
  r.df = static_cast<double>(r.n - 1);
  r.t = m.mean / se;
  r.p = two_sided_p(r.t, r.df);
  const double q = t_quantile(0.975, r.df);
  r.ci_low = m.mean - q * se;
  r.ci_high = m.mean + q * se;
  r.standardized = m.mean / sd;
  if (resampling.resamples > 0) {  // sign flips: under H0 each difference is as likely positive as negative
    MersenneTwister64 rng(resampling.seed);
    const double observed = std::fabs(m.mean) * (1 - 1e-12);
    PermutationCount extreme(resampling);
    for (int k = 1; k <= resampling.resamples; ++k) {
      double sum = 0;
      uint64_t bits = 0;
      for (std::size_t i = 0; i < d.size(); ++i) {
        if (i % 64 == 0) bits = rng();
        sum += (bits >> (i % 64)) & 1 ? d[i] : -d[i];
      }
      if (!extreme.add(std::fabs(sum / static_cast<double>(d.size())) >= observed, k)) break;
    }
    extreme.finish(r);
  }
  return r;
}

TestResult welch_test(const std::vector<double>& a_in, const std::vector<double>& b_in, const Resampling& resampling) {
  TestResult r;
  const std::vector<double> a = defined(a_in), b = defined(b_in);
  const Moments ma = moments(a), mb = moments(b);
  r.n = a.size() + b.size();
  r.mean_a = ma.mean;
  r.mean_b = mb.mean;
  r.effect = ma.mean - mb.mean;
  if (a.size() < 2 || b.size() < 2) {
    r.why_nan = "fewer than 2 examples with a defined score in a group";
    return r;
  }
  const double va = ma.var / static_cast<double>(a.size()), vb = mb.var / static_cast<double>(b.size());
  const double se = std::sqrt(va + vb);
  if (se == 0) {
    r.why_nan = "the scores do not vary in either group";
    return r;
  }
  r.t = r.effect / se;
  r.df = (va + vb) * (va + vb) / (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
  r.p = two_sided_p(r.t, r.df);
  const double q = t_quantile(0.975, r.df);
  r.ci_low = r.effect - q * se;
  r.ci_high = r.effect + q * se;
  const double n = static_cast<double>(r.n);
  const double pooled = std::sqrt(((static_cast<double>(a.size()) - 1) * ma.var + (static_cast<double>(b.size()) - 1) * mb.var) / (n - 2));
  if (pooled > 0) r.standardized = (1 - 3 / (4 * n - 9)) * r.effect / pooled;  // Hedges' g
  if (resampling.resamples > 0) {  // label permutations of the pooled scores
    std::vector<double> pool(a);
    pool.insert(pool.end(), b.begin(), b.end());
    MersenneTwister64 rng(resampling.seed);
    const double observed = std::fabs(r.effect) * (1 - 1e-12);
    const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
    const double settled = reversal_error_bound(pool, na, nb);
    PermutationCount extreme(resampling);
    for (int k = 1; k <= resampling.resamples; ++k) {
      double ra = 0, rb = 0;  // the group sums as the shuffle finishes each position: in reverse order
      rng.shuffle_and_sum(pool.data(), pool.size(), a.size(), ra, rb);
      double statistic = std::fabs(ra / na - rb / nb);
      if (!(std::fabs(statistic - observed) > settled)) {  // too close to call: the sums in order decide
        const auto [sa, sb] = sums_in_order(pool.data(), a.size(), b.size());
        statistic = std::fabs(sa / na - sb / nb);
      }
      if (!extreme.add(statistic >= observed, k)) break;
    }
    extreme.finish(r);
  }
  return r;
}

TestResult spearman_test(const std::vector<double>& x_in, const std::vector<double>& y_in) {
  TestResult r;
  std::vector<double> x, y;
  for (std::size_t i = 0; i < x_in.size(); ++i)
    if (!std::isnan(x_in[i]) && !std::isnan(y_in[i])) x.push_back(x_in[i]), y.push_back(y_in[i]);
  r.n = x.size();
  r.mean_a = moments(x).mean;
  r.mean_b = moments(y).mean;
  if (r.n < 4) {
    r.why_nan = "fewer than 4 examples with both a score and a label";
    return r;
  }
  const std::vector<double> rx = ranks(x), ry = ranks(y);
  const Moments mx = moments(rx), my = moments(ry);
  double cov = 0;
  for (std::size_t i = 0; i < r.n; ++i) cov += (rx[i] - mx.mean) * (ry[i] - my.mean);
  if (mx.var == 0 || my.var == 0) {
    r.why_nan = "the score or the label does not vary";
    return r;
  }
  r.effect = cov / static_cast<double>(r.n - 1) / std::sqrt(mx.var * my.var);
  r.df = static_cast<double>(r.n - 2);
  const double rho = std::clamp(r.effect, -1.0, 1.0);
  r.t = std::fabs(rho) == 1 ? std::copysign(INFINITY, rho) : rho * std::sqrt(r.df / (1 - rho * rho));
  r.p = two_sided_p(r.t, r.df);
  const double z = std::atanh(std::clamp(rho, -1 + 1e-15, 1 - 1e-15)), se = 1 / std::sqrt(static_cast<double>(r.n) - 3);
  r.ci_low = std::tanh(z - 1.959963984540054 * se);
  r.ci_high = std::tanh(z + 1.959963984540054 * se);
  return r;
}

std::vector<double> benjamini_hochberg(const std::vector<double>& p) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (!std::isnan(p[i])) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> q(p.size(), NAN);
  const double m = static_cast<double>(order.size());
  double running = 1;
  for (std::size_t k = order.size(); k-- > 0;) {
    running = std::min(running, p[order[k]] * m / static_cast<double>(k + 1));
    q[order[k]] = running;
  }
  return q;
}

namespace {

// Means of `resamples` draws with replacement from v.
std::vector<double> resampled_means(const std::vector<double>& v, int resamples, MersenneTwister64& rng) {
  std::vector<double> means(static_cast<std::size_t>(resamples));
  for (auto& m : means) {
    double s = 0;
    for (std::size_t i = 0; i < v.size(); ++i) s += v[rng.below(v.size())];
    m = s / static_cast<double>(v.size());
  }
  return means;
}

// 2.5th and 97.5th percentiles, linear between order statistics (numpy's default).
std::pair<double, double> percentile_interval(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(x.size() - 1);
    const std::size_t i = static_cast<std::size_t>(pos);
    return i + 1 < x.size() ? x[i] + (pos - static_cast<double>(i)) * (x[i + 1] - x[i]) : x[i];
  };
  return {at(0.025), at(0.975)};
}

}  // namespace

std::pair<double, double> bootstrap_mean_ci(const std::vector<double>& values, int resamples, uint64_t seed) {
  const std::vector<double> v = defined(values);
  if (v.size() < 2 || resamples < 1) return {NAN, NAN};
  MersenneTwister64 rng(seed);
  return percentile_interval(resampled_means(v, resamples, rng));
}

std::pair<double, double> bootstrap_difference_ci(const std::vector<double>& a_in, const std::vector<double>& b_in,
                                                  int resamples, uint64_t seed) {
  const std::vector<double> a = defined(a_in), b = defined(b_in);
  if (a.size() < 2 || b.size() < 2 || resamples < 1) return {NAN, NAN};
  MersenneTwister64 rng(seed);
  std::vector<double> ma = resampled_means(a, resamples, rng), mb = resampled_means(b, resamples, rng);
  for (std::size_t i = 0; i < ma.size(); ++i) ma[i] -= mb[i];
  return percentile_interval(ma);
}

}  // namespace attnscan::stats
