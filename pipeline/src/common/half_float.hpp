#pragma once
// IEEE binary16 and bfloat16 -> float32, exact for every value (subnormals, infinities, NaN): HDF5 converts
// the file's half type bit by bit in software, which is what a complete check of a file spends its time
// on otherwise; checkpoints store weights in either.
#include <cstdint>
#include <cstring>

namespace attnscan {

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // +-0
  } else {  // subnormal: normalize
    exponent = 113;
    while (!(mantissa & 0x400u)) mantissa <<= 1, --exponent;
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline float bfloat16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace attnscan
