#include "store/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace attnscan {

namespace {

// Slice-by-8 tables of the reflected Castagnoli polynomial 0x82F63B78.
struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (std::size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};

const Tables& tables() {
  static const Tables tab;
  return tab;
}

// Polynomials over GF(2) modulo the Castagnoli polynomial, in the reflected order of the checksum
// (bit 31 is x^0): the product a * b.
uint32_t multiply_mod_p(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t term = 1u << 31; term != 0; term >>= 1) {  // b is b * x^k at term x^k
    if (a & term) product ^= b;
    b = (b & 1) ? (b >> 1) ^ 0x82F63B78u : b >> 1;
  }
  return product;
}

// x^n modulo the polynomial, by squaring: x^(2^k) for k = 0..63 precomputed.
uint32_t x_to_the(uint64_t n) {
  static const std::array<uint32_t, 64> x_2k = [] {
    std::array<uint32_t, 64> s{};
    s[0] = 1u << 30;  // x^1
    for (std::size_t k = 1; k < s.size(); ++k) s[k] = multiply_mod_p(s[k - 1], s[k - 1]);
    return s;
  }();
  uint32_t power = 1u << 31;  // x^0
  for (std::size_t k = 0; n != 0; ++k, n >>= 1)
    if (n & 1) power = multiply_mod_p(x_2k[k], power);
  return power;
}

#if defined(__x86_64__)
// Multiplication by one fixed polynomial, a linear map of the 32-bit remainder: a table per byte.
struct ShiftTables {
  std::array<std::array<uint32_t, 256>, 4> t{};
  explicit ShiftTables(uint32_t by) {
    for (uint32_t j = 0; j < 4; ++j)
      for (uint32_t v = 0; v < 256; ++v) t[j][v] = multiply_mod_p(v << (8 * j), by);
  }
  uint32_t operator()(uint32_t a) const { return t[0][a & 0xff] ^ t[1][(a >> 8) & 0xff] ^ t[2][(a >> 16) & 0xff] ^ t[3][a >> 24]; }
};

// SSE4.2's crc32 instruction computes CRC-32C, 8 bytes at a time. It takes 3 cycles and can start one a cycle,
// so each block of 3 stripes runs three chains side by side, joined by moving the first two past the bytes
// after them (remainder * x^(8 * bytes)): about 3x one chain's rate.
constexpr std::size_t kStripe = 4096;

__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(const void* data, std::size_t n, uint32_t crc) {
  static const ShiftTables past_one(x_to_the(8 * kStripe)), past_two(x_to_the(16 * kStripe));
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = ~crc;  // the remainder itself, without the inversions
  for (; n >= 3 * kStripe; n -= 3 * kStripe, p += 3 * kStripe) {
    uint64_t a = c, b = 0, d = 0;
    for (std::size_t i = 0; i < kStripe; i += 8) {
      uint64_t wa, wb, wd;
      std::memcpy(&wa, p + i, 8);
      std::memcpy(&wb, p + kStripe + i, 8);
      std::memcpy(&wd, p + 2 * kStripe + i, 8);
      a = _mm_crc32_u64(a, wa);
      b = _mm_crc32_u64(b, wb);
      d = _mm_crc32_u64(d, wd);
    }
    c = past_two(static_cast<uint32_t>(a)) ^ past_one(static_cast<uint32_t>(b)) ^ static_cast<uint32_t>(d);
  }
  for (; n >= 8; n -= 8, p += 8) {  // the rest in one chain
    uint64_t word;
    std::memcpy(&word, p, 8);  // x86 is little-endian, the byte order the checksum is defined on
    c = _mm_crc32_u64(c, word);
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}
#endif

}  // namespace

uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t bytes_b) {
  // The pre- and post-inversions of both checksums cancel: A's remainder moves on by 8 * |B| bits.
  return multiply_mod_p(x_to_the(8 * bytes_b), crc_a) ^ crc_b;
}

uint32_t crc32c(const void* data, std::size_t n, uint32_t crc) {
#if defined(__x86_64__)
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) return crc32c_sse42(data, n, crc);
#endif
  return crc32c_portable(data, n, crc);
}

uint32_t crc32c_portable(const void* data, std::size_t n, uint32_t crc) {
  const auto& t = tables().t;
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    // Little-endian byte order by construction, independent of the host's.
    const uint32_t lo = c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    const uint32_t hi = uint32_t(p[4]) | uint32_t(p[5]) << 8 | uint32_t(p[6]) << 16 | uint32_t(p[7]) << 24;
    c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
        t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  for (; n > 0; --n, ++p) c = t[0][(c ^ *p) & 0xff] ^ (c >> 8);
  return ~c;
}

}  // namespace attnscan
