#pragma once
// x ln x in double for the head-similarity sums, in a form compilers vectorise (no call, no branch): for
// x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln x = e ln 2 + 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716,
// with the atanh series to s^21 (the rest is below 2e-19). Within a few ulp of x * std::log(x) for the
// normal doubles (analysis_tests checks it); 0 at x = 0 (the series of the zero bits is finite).
#include <cstdint>
#include <cstring>

namespace attnscan::analysis {

inline double fast_xlogx(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const uint64_t mantissa = bits & 0x000fffffffffffffULL;
  const uint64_t above = static_cast<int64_t>(mantissa) >= 0x6a09e667f3bcdLL;  // 1.mantissa >= sqrt(2): halve it
  // The exponent as a double without an int64 conversion (none in AVX2): 2^52 + its bits, minus 2^52.
  const uint64_t e_bits = 0x4330000000000000ULL | (((bits >> 52) & 0x7ff) + above);
  const uint64_t m_bits = mantissa | (0x3ff0000000000000ULL - (above << 52));
  double m, e_biased;
  std::memcpy(&m, &m_bits, sizeof m);
  std::memcpy(&e_biased, &e_bits, sizeof e_biased);
  const double e = e_biased - (4503599627370496.0 + 1023);
  const double s = (m - 1) / (m + 1), z = s * s;
  const double series =
      2 * s *
      (1 + z * (1.0 / 3 + z * (1.0 / 5 + z * (1.0 / 7 + z * (1.0 / 9 + z * (1.0 / 11 + z * (1.0 / 13 + z * (1.0 / 15 +
      z * (1.0 / 17 + z * (1.0 / 19 + z * (1.0 / 21)))))))))));
  constexpr double kLn2High = 0.693147180369123816490, kLn2Low = 1.90821492927058770002e-10;  // ln 2 split
  return x * (e * kLn2High + (series + e * kLn2Low));
}

}  // namespace attnscan::analysis
