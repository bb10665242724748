#pragma once
// A natural logarithm that compilers vectorise (no call, no branch, no float compare, no division), for
// detectors that take the log of every attention weight. For a normal float x = m * 2^e with m in
// [sqrt(1/2), sqrt(2)): ln x = e ln 2 + ln(1 + t), t = m - 1 (exact), and ln(1 + t) = t + t^2 P(t) with P
// of degree 6 fitted by scripts/fit_fast_log.py (at most 6.1e-8 from ln(1 + t) in float over the interval);
// float rounding dominates: |fast_log(x) - ln x| <= 3e-7 * max(1, |ln x|) over the normal floats
// (tests/plugins/fast_log_test.cpp checks it against the double logarithm). For 0 and subnormals it
// returns a finite number near ln 2^-126, so x * fast_log(x) is 0, or off by less than 1e-36, there.
#include <cstdint>
#include <cstring>

namespace attnscan::detectors {

inline float fast_log(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const int32_t mantissa = static_cast<int32_t>(bits & 0x007fffffu);
  const int32_t above = 1 + ((mantissa - 0x3504f4) >> 31);  // 1 where 1.mantissa >= sqrt(2) (halve it), else 0
  const int32_t e = (static_cast<int32_t>(bits >> 23) & 0xff) - 127 + above;
  const uint32_t m_bits = static_cast<uint32_t>(mantissa) | static_cast<uint32_t>(0x3f800000 - (above << 23));
  float m;
  std::memcpy(&m, &m_bits, sizeof m);
  const float t = m - 1.0f;
  const float p = -0.500005782f + t * (0.333353043f + t * (-0.249616712f + t * (0.198869511f + t * (-0.173222169f +
                  t * (0.163451314f + t * -0.100583404f)))));
  return static_cast<float>(e) * 0.693147180559945f + (t + t * t * p);
}

}  // namespace attnscan::detectors
