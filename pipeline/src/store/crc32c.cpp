#include "store/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
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

// Folding with carry-less products (VPCLMULQDQ): 16 lanes of 16 bytes (four registers of AVX-512, eight of
// AVX2), each moved on by a whole 256-byte block at a time by multiplying it with x^t modulo the
// polynomial, then added to the lane's bytes there; at the end the lanes fold into one, whose remainder
// the crc32 instruction takes. A lane holds the polynomial of its bytes in the checksum's reflected order
// (the first bit of the 16 bytes, bit 0, is x^127). Its first 8 bytes A_hi and last 8 A_lo give
// A = A_hi x^64 + A_lo, so A x^t = A_hi (x^(t + 64) mod P) + A_lo (x^t mod P): two 64 x 32-bit products
// of at most 95 bits.
// A carry-less product of two reflected operands comes out reflected and one place short (bit k is
// x^(126 - k) of the product, where the lane's bit k is x^(127 - k)), so each constant is taken one
// degree lower: x^(t + 63) and x^(t - 1), stored reflected in the upper half of a 64-bit word.
constexpr std::size_t kBlockBytes = 256;

// The two constants of a fold by `bytes`, in the order vpclmulqdq's selectors 0x00 and 0x11 take them
// from each lane: A_hi times `low`, A_lo times `high`.
struct FoldConstants {
  int64_t low, high;
  explicit FoldConstants(std::size_t bytes)
      : low(static_cast<int64_t>(uint64_t{x_to_the(8 * uint64_t{bytes} + 63)} << 32)),
        high(static_cast<int64_t>(uint64_t{x_to_the(8 * uint64_t{bytes} - 1)} << 32)) {}
};

__attribute__((target("sse2"))) __m128i in_one_lane(const FoldConstants& k) { return _mm_set_epi64x(k.high, k.low); }
__attribute__((target("avx512f"))) __m512i in_four_lanes(const FoldConstants& k) {
  return _mm512_set_epi64(k.high, k.low, k.high, k.low, k.high, k.low, k.high, k.low);
}
__attribute__((target("avx2"))) __m256i in_two_lanes(const FoldConstants& k) {
  return _mm256_set_epi64x(k.high, k.low, k.high, k.low);
}

__attribute__((target("sse2,pclmul"))) __m128i fold_lane(__m128i lane, __m128i constants) {
  return _mm_xor_si128(_mm_clmulepi64_si128(lane, constants, 0x00), _mm_clmulepi64_si128(lane, constants, 0x11));
}

__attribute__((target("avx2,vpclmulqdq"))) __m256i fold_lanes(__m256i lanes, __m256i constants, __m256i next) {
  return _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(lanes, constants, 0x00),
                                           _mm256_clmulepi64_epi128(lanes, constants, 0x11)),
                          next);
}

__attribute__((target("avx512f,vpclmulqdq"))) __m512i fold_lanes(__m512i lanes, __m512i constants, __m512i next) {
  // 0x96: the three-way XOR of the two products and the next block's bytes.
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(lanes, constants, 0x00),
                                   _mm512_clmulepi64_epi128(lanes, constants, 0x11), next, 0x96);
}

// The checksum (inverted remainder) of everything folded into `count` consecutive lanes: each onto the
// last, then the last's 16 bytes through the crc32 instruction from 0, which gives A x^32 mod P.
__attribute__((target("pclmul,sse4.2"))) uint32_t checksum_of_lanes(const __m128i* lanes, int count) {
  static const FoldConstants by_16(16), by_32(32), by_48(48);
  const FoldConstants* by[] = {&by_16, &by_32, &by_48};
  __m128i lane = lanes[count - 1];
  for (int l = 0; l + 1 < count; ++l)
    lane = _mm_xor_si128(lane, fold_lane(lanes[l], in_one_lane(*by[count - 2 - l])));
  const uint64_t c = _mm_crc32_u64(_mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(lane))),
                                   static_cast<uint64_t>(_mm_extract_epi64(lane, 1)));
  return ~static_cast<uint32_t>(c);
}

__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2"))) uint32_t crc32c_clmul_avx512(const void* data,
                                                                                         std::size_t n, uint32_t crc) {
  if (n < 2 * kBlockBytes) return crc32c_sse42(data, n, crc);
  static const FoldConstants by_block(kBlockBytes), by_64(64);
  const __m512i block_constants = in_four_lanes(by_block);
  const auto* p = static_cast<const uint8_t*>(data);
  __m512i acc[4];
  for (int a = 0; a < 4; ++a) acc[a] = _mm512_loadu_si512(p + 64 * a);
  // The remainder so far enters as the first 32 bits of the message: c x^(8 n) is what it contributes.
  acc[0] = _mm512_xor_si512(acc[0], _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(~crc))));
  p += kBlockBytes, n -= kBlockBytes;
  for (; n >= kBlockBytes; p += kBlockBytes, n -= kBlockBytes)
    for (int a = 0; a < 4; ++a) acc[a] = fold_lanes(acc[a], block_constants, _mm512_loadu_si512(p + 64 * a));
  // Each register onto the next (64 bytes on), then the last's four lanes onto its last.
  const __m512i by_register = in_four_lanes(by_64);
  for (int a = 1; a < 4; ++a) acc[a] = fold_lanes(acc[a - 1], by_register, acc[a]);
  __m128i lanes[4];  // through memory: GCC 12's lane extracts warn of an undefined operand they never read
  _mm512_storeu_si512(lanes, acc[3]);
  return crc32c_sse42(p, n, checksum_of_lanes(lanes, 4));
}

__attribute__((target("avx2,vpclmulqdq,pclmul,sse4.2"))) uint32_t crc32c_clmul_avx2(const void* data, std::size_t n,
                                                                                    uint32_t crc) {
  if (n < 2 * kBlockBytes) return crc32c_sse42(data, n, crc);
  static const FoldConstants by_block(kBlockBytes), by_32(32);
  const __m256i block_constants = in_two_lanes(by_block);
  const auto* p = static_cast<const uint8_t*>(data);
  __m256i acc[8];
  for (int a = 0; a < 8; ++a) acc[a] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * a));
  acc[0] = _mm256_xor_si256(acc[0], _mm256_zextsi128_si256(_mm_cvtsi32_si128(static_cast<int>(~crc))));
  p += kBlockBytes, n -= kBlockBytes;
  for (; n >= kBlockBytes; p += kBlockBytes, n -= kBlockBytes)
    for (int a = 0; a < 8; ++a)
      acc[a] = fold_lanes(acc[a], block_constants, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * a)));
  // Each register onto the next (32 bytes on), then the last's two lanes onto its last.
  const __m256i by_register = in_two_lanes(by_32);
  for (int a = 1; a < 8; ++a) acc[a] = fold_lanes(acc[a - 1], by_register, acc[a]);
  __m128i lanes[2];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), acc[7]);
  return crc32c_sse42(p, n, checksum_of_lanes(lanes, 2));
}
#endif

}  // namespace

uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t bytes_b) {
  // The pre- and post-inversions of both checksums cancel: A's remainder moves on by 8 * |B| bits.
  return multiply_mod_p(x_to_the(8 * bytes_b), crc_a) ^ crc_b;
}

bool crc32c_has(Crc32cBody body) {
  switch (body) {
    case Crc32cBody::Portable: return true;
#if defined(__x86_64__)
    case Crc32cBody::Crc32Instruction: return __builtin_cpu_supports("sse4.2");
    case Crc32cBody::FoldingAvx2:
      return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("vpclmulqdq");
    case Crc32cBody::FoldingAvx512: return crc32c_has(Crc32cBody::FoldingAvx2) && __builtin_cpu_supports("avx512f");
#endif
    default: return false;
  }
}

uint32_t crc32c_with(Crc32cBody body, const void* data, std::size_t n, uint32_t crc) {
  switch (body) {
#if defined(__x86_64__)
    case Crc32cBody::Crc32Instruction: return crc32c_sse42(data, n, crc);
    case Crc32cBody::FoldingAvx2: return crc32c_clmul_avx2(data, n, crc);
    case Crc32cBody::FoldingAvx512: return crc32c_clmul_avx512(data, n, crc);
#endif
    default: return crc32c_portable(data, n, crc);
  }
}

uint32_t crc32c(const void* data, std::size_t n, uint32_t crc) {
  static const Crc32cBody best = [] {
    Crc32cBody fastest = Crc32cBody::Portable;
    for (Crc32cBody body : kCrc32cBodies)
      if (crc32c_has(body)) fastest = body;
    return fastest;
  }();
  return crc32c_with(best, data, n, crc);
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
