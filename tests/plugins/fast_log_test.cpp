// The detectors' vectorisable logarithm (plugins/common/fast_log.hpp) against the double logarithm, over
// every exponent of the normal floats: within its stated bound 3e-7 * max(1, |ln x|); x ln x at 0 and subnormals.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "../../plugins/common/fast_log.hpp"

namespace {

double error_in_bounds(float x) {
  const double want = std::log(static_cast<double>(x));
  return std::abs(static_cast<double>(attnscan::detectors::fast_log(x)) - want) / std::max(1.0, std::abs(want));
}

}  // namespace

TEST(FastLog, WithinItsBoundOverTheNormalFloats) {
  double worst = 0;
  float worst_at = 0;
  // Every 61st bit pattern from the smallest normal float to the largest: each exponent, ~2^17 mantissas each.
  for (uint32_t bits = 0x00800000u; bits < 0x7f800000u; bits += 61) {
    float x;
    std::memcpy(&x, &bits, sizeof x);
    const double err = error_in_bounds(x);
    if (err > worst) worst = err, worst_at = x;
  }
  for (float x : {FLT_MIN, FLT_MAX, 1.0f, std::nextafter(1.0f, 0.0f), std::nextafter(1.0f, 2.0f), 1.41421356f,
                  std::nextafter(1.41421356f, 2.0f), 0.70710678f, 0.5f, 2.0f, 1e-30f, 0.36787944f})
    worst = std::max(worst, error_in_bounds(x));
  EXPECT_EQ(attnscan::detectors::fast_log(1.0f), 0.0f);
  // Outside the domain, x ln x stays right: 0 for x = 0, within 1e-36 for subnormals.
  EXPECT_EQ(0.0f * attnscan::detectors::fast_log(0.0f), 0.0f);
  for (float x : {FLT_MIN / 2, FLT_MIN / 1024, std::nextafter(0.0f, 1.0f)})
    EXPECT_LT(std::abs(double(x) * attnscan::detectors::fast_log(x) - double(x) * std::log(double(x))), 1e-36) << x;
  EXPECT_LE(worst, 3e-7) << "at " << worst_at;
  std::cout << "fast_log: worst |error| / max(1, |ln x|) = " << worst << " (at " << worst_at << ")\n";
}
