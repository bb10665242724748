#include "encoder/attention_kernel.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <immintrin.h>

// The vector helpers below take and return vectors by value; all are inlined into the bodies of one
// instruction set each, so no call passes a vector across the ABI GCC warns about.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace attnscan::kernels {

constexpr int64_t kWidth = 16;  // floats per unit of the scratch rows, the products and the transposes

namespace {

// Two ways to hold 16 floats, each for the instruction sets that keep it in registers:
// - Wide, one generic 16-float vector: one AVX-512 register (also the plain x86-64 body);
// - Twin, two 8-float halves: two AVX2 registers. Where no register is 16 floats wide, GCC keeps a Wide in
//   memory and compares it one lane at a time with branches: 9x the attention's time under AVX2.
// aligned(4) lets either load from and store to any float. Both give each lane the same operations in the
// same order, and the AVX2 body fuses multiplies and adds as the AVX-512 body does (every AVX2 CPU has
// FMA), so their numbers are the same bit for bit; the plain body's round differently.
typedef float Wide __attribute__((vector_size(64), aligned(4)));
typedef int32_t WideInts __attribute__((vector_size(64)));
typedef float Half __attribute__((vector_size(32), aligned(4)));
typedef int32_t HalfInts __attribute__((vector_size(32)));
#define KERNEL_INLINE __attribute__((always_inline)) inline

struct Twin {
  Half lo, hi;
};
KERNEL_INLINE Twin operator+(const Twin& a, const Twin& b) { return {a.lo + b.lo, a.hi + b.hi}; }
KERNEL_INLINE Twin operator-(const Twin& a, float b) { return {a.lo - b, a.hi - b}; }
KERNEL_INLINE Twin operator*(const Twin& a, float b) { return {a.lo * b, a.hi * b}; }
KERNEL_INLINE Twin operator*(float a, const Twin& b) { return {a * b.lo, a * b.hi}; }
KERNEL_INLINE Twin operator/(const Twin& a, float b) { return {a.lo / b, a.hi / b}; }
KERNEL_INLINE Twin& operator+=(Twin& a, const Twin& b) { return a = a + b; }

template <class V>
KERNEL_INLINE V splat(float x) {
  if constexpr (std::is_same_v<V, Twin>) return {Half{} + x, Half{} + x};
  else return V{} + x;
}
// A Twin moves as its two halves: one copy of the whole struct goes through the stack in 16-byte pieces,
// and the load of a half from there waits for those stores to drain.
template <class V>
KERNEL_INLINE V load(const float* p) {
  if constexpr (std::is_same_v<V, Twin>) {
    return {load<Half>(p), load<Half>(p + 8)};
  } else {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
}
KERNEL_INLINE void store(float* p, const Wide& v) { std::memcpy(p, &v, sizeof v); }
KERNEL_INLINE void store(float* p, const Half& v) { std::memcpy(p, &v, sizeof v); }
KERNEL_INLINE void store(float* p, const Twin& v) { store(p, v.lo), store(p + 8, v.hi); }
KERNEL_INLINE float lane(const Wide& v, int t) { return v[t]; }
KERNEL_INLINE float lane(const Twin& v, int t) { return t < 8 ? v.lo[t] : v.hi[t - 8]; }

// Lane by lane, `candidate` where it is larger than `now` (a NaN candidate never is).
KERNEL_INLINE Wide larger(const Wide& now, const Wide& candidate) { return candidate > now ? candidate : now; }
KERNEL_INLINE Half larger(const Half& now, const Half& candidate) { return candidate > now ? candidate : now; }
KERNEL_INLINE Twin larger(const Twin& now, const Twin& candidate) {
  return {larger(now.lo, candidate.lo), larger(now.hi, candidate.hi)};
}

// `other` in the lanes from `count` on.
KERNEL_INLINE Wide keep_first(const Wide& v, int64_t count, float other) {
  WideInts lane_index;
  for (int t = 0; t < 16; ++t) lane_index[t] = t;
  return lane_index < static_cast<int32_t>(count) ? v : Wide{} + other;
}
KERNEL_INLINE Twin keep_first(const Twin& v, int64_t count, float other) {
  HalfInts lane_index;
  for (int t = 0; t < 8; ++t) lane_index[t] = t;
  const auto c = static_cast<int32_t>(count);
  return {lane_index < c ? v.lo : Half{} + other, lane_index + 8 < c ? v.hi : Half{} + other};
}

// The AVX2 mask of lanes first..first+7 (the sign bit of each): set where the lane is below `count`.
KERNEL_INLINE HalfInts lanes_below(int64_t count, int first) {
  HalfInts lane_index;
  for (int t = 0; t < 8; ++t) lane_index[t] = first + t;
  return lane_index < static_cast<int32_t>(count);
}

// The first `count` (< 16) lanes from p, zeros in the rest; and stored at p, the memory past them untouched.
// Masked loads and stores where the body has them: lane by lane through memory, the compiler makes a memcpy
// on the stack, and reading a vector just stored in pieces (or pieces of one just stored whole) waits for
// the stores to drain (a fifth of the softmax's time, in the copy of each row's last partial vector).
template <KernelIsa I, class V>
KERNEL_INLINE V load_first(const float* p, int64_t count) {
  if constexpr (std::is_same_v<V, Twin>) {
    static_assert(I == KernelIsa::Avx2, "a Twin is the AVX2 body's");
    return {__builtin_ia32_maskloadps256(reinterpret_cast<const __v8sf*>(p), lanes_below(count, 0)),
            __builtin_ia32_maskloadps256(reinterpret_cast<const __v8sf*>(p + 8), lanes_below(count, 8))};
  } else if constexpr (I == KernelIsa::Avx512) {
    return __builtin_ia32_loadups512_mask(p, Wide{}, static_cast<__mmask16>((1u << count) - 1));
  } else {
    Wide v{};
    std::memcpy(&v, p, static_cast<std::size_t>(count) * sizeof(float));
    return v;
  }
}
template <KernelIsa I>
KERNEL_INLINE void store_first(float* p, const Wide& v, int64_t count) {
  if constexpr (I == KernelIsa::Avx512) {
    __builtin_ia32_storeups512_mask(p, v, static_cast<__mmask16>((1u << count) - 1));
  } else {
    for (int64_t t = 0; t < count; ++t) p[t] = v[t];
  }
}
template <KernelIsa I>
KERNEL_INLINE void store_first(float* p, const Twin& v, int64_t count) {
  static_assert(I == KernelIsa::Avx2, "a Twin is the AVX2 body's");
  __builtin_ia32_maskstoreps256(reinterpret_cast<__v8sf*>(p), lanes_below(count, 0), v.lo);
  __builtin_ia32_maskstoreps256(reinterpret_cast<__v8sf*>(p + 8), lanes_below(count, 8), v.hi);
}

// exp(x) = 2^k e^r with k = round(x / ln 2), r = x - k ln 2 in [-ln2/2, ln2/2]; e^r by its Taylor series to
// r^7/7! (remainder < |r|^8/8! < 6e-9), 2^k from the exponent bits; on each lane, with no branch and no call.
template <class E, class EInts>
KERNEL_INLINE E exp_lanes(const E& x) {
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693145751953125f, kLn2Lo = 1.42860682030941723e-6f;
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer held in the low bits
  const E c = x < -87.3f ? E{} - 87.3f : x;
  const E shifted = c * kLog2e + kShift;
  const E kf = shifted - kShift;
  const E r = (c - kf * kLn2Hi) - kf * kLn2Lo;
  const E p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
  const EInts k = __builtin_bit_cast(EInts, shifted) - 0x4b400000;  // the bits of kShift: what is left is k
  const EInts scale_bits = (k + 127) << 23;
  return x < -87.3f ? E{} : p * __builtin_bit_cast(E, scale_bits);
}
KERNEL_INLINE Wide exp_nonpositive(const Wide& x) { return exp_lanes<Wide, WideInts>(x); }
KERNEL_INLINE Twin exp_nonpositive(const Twin& x) {
  return {exp_lanes<Half, HalfInts>(x.lo), exp_lanes<Half, HalfInts>(x.hi)};
}

// The largest lane, by halving in registers (the largest of any order is the same number): lane t
// takes lane t + w where that is larger, w = 8, 4, 2, 1.
KERNEL_INLINE float largest_of_8(Half v) {
  v = larger(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7));
  v = larger(v, __builtin_shufflevector(v, v, 2, 3, 2, 3, 2, 3, 2, 3));
  v = larger(v, __builtin_shufflevector(v, v, 1, 1, 1, 1, 1, 1, 1, 1));
  return v[0];
}
KERNEL_INLINE float largest(const Wide& v) {
  const Half low = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  const Half high = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  return largest_of_8(larger(low, high));
}
KERNEL_INLINE float largest(const Twin& v) { return largest_of_8(larger(v.lo, v.hi)); }

// One stage of a 16 x 16 transpose in registers: rows a and b, whose indices differ in bit h, swap the
// h-wide blocks that make bit h of a value's row and of its column trade places; after the stages for
// h = 1, 2, 4, 8 every value (r, c) is at (c, r). In a Twin, stages 1, 2, 4 stay within each half and
// stage 8 swaps halves.
constexpr int low_row(int width, int h, int c) { return (c & h) ? width + (c ^ h) : c; }
constexpr int high_row(int width, int h, int c) { return (c & h) ? width + c : (c | h); }
template <int H, class E, int... C>
KERNEL_INLINE void swap_blocks(E& a, E& b, std::integer_sequence<int, C...>) {
  constexpr int width = sizeof...(C);
  const E low = __builtin_shufflevector(a, b, low_row(width, H, C)...);
  const E high = __builtin_shufflevector(a, b, high_row(width, H, C)...);
  a = low, b = high;
}
template <int H>
KERNEL_INLINE void transpose_stage(Wide (&m)[kWidth]) {
  for (int r = 0; r < kWidth; ++r)
    if (!(r & H)) swap_blocks<H>(m[r], m[r | H], std::make_integer_sequence<int, 16>{});
}
template <int H>
KERNEL_INLINE void transpose_stage(Twin (&m)[kWidth]) {
  for (int r = 0; r < kWidth; ++r)
    if (!(r & H)) {
      if constexpr (H == 8) {
        std::swap(m[r].hi, m[r | H].lo);
      } else {
        swap_blocks<H>(m[r].lo, m[r | H].lo, std::make_integer_sequence<int, 8>{});
        swap_blocks<H>(m[r].hi, m[r | H].hi, std::make_integer_sequence<int, 8>{});
      }
    }
}
template <class V>
KERNEL_INLINE void transpose(V (&m)[kWidth]) {
  transpose_stage<1>(m), transpose_stage<2>(m), transpose_stage<4>(m), transpose_stage<8>(m);
}

// Three passes over each row of scores (in place; whole vectors, lanes past n ignored): scale (and bias)
// with the running largest, exp with the running sum, then the division into the output row (n wide).
// The sum adds the last partial vector's values one by one, then the 16 partial sums in order: a chain
// of dependent adds, so R rows go together and their chains interleave (each row's numbers are those of
// the row alone); 16 rows go in the lanes of one vector, after a transpose. The last partial vector stays
// in a register across the passes: a vector load of values just stored one by one stalls the CPU for
// longer than the rest of the row takes. The scores are scaled to x * mul / div (kMultiplyOnly: x * mul).
template <int R, class V, KernelIsa I, bool kMultiplyOnly>
KERNEL_INLINE void softmax_block(float* scores, int64_t ld, const float* bias, int64_t ld_bias, int64_t n, float mul,
                                 float div, float* out, int64_t ld_out) {
  const auto scaled = [mul, div](const V& x) {
    if constexpr (kMultiplyOnly) return x * mul;
    else return x * mul / div;
  };
  const int64_t full = n / kWidth * kWidth, rest = n - full;
  V sums[R], tail[R];
  for (int r = 0; r < R; ++r) {
    float* row = scores + r * ld;
    const float* b = bias ? bias + r * ld_bias : nullptr;
    V top = splat<V>(-__FLT_MAX__);
    for (int64_t j = 0; j < full; j += kWidth) {
      V x = scaled(load<V>(row + j));
      if (b) x += load<V>(b + j);
      store(row + j, x);
      top = larger(top, x);
    }
    tail[r] = V{};
    if (rest > 0) {
      tail[r] = scaled(load<V>(row + full));
      if (b) tail[r] += load_first<I, V>(b + full, rest);
      tail[r] = keep_first(tail[r], rest, -__FLT_MAX__);  // the row's largest is at least that already
      top = larger(top, tail[r]);
    }
    const float max = largest(top);
    sums[r] = V{};
    for (int64_t j = 0; j < full; j += kWidth) {
      const V e = exp_nonpositive(load<V>(row + j) - max);
      store(row + j, e);
      sums[r] += e;
    }
    if (rest > 0) tail[r] = exp_nonpositive(tail[r] - max);
  }
  float sum[R] = {};
  if constexpr (R == kWidth) {  // 16 rows' chains in the lanes of one vector: lane r adds row r's terms in order
    V by_lane[kWidth], total{};
    std::copy(tail, tail + R, by_lane);
    transpose(by_lane);
    for (int64_t t = 0; t < rest; ++t) total += by_lane[t];
    std::copy(sums, sums + R, by_lane);
    transpose(by_lane);
    for (int64_t t = 0; t < kWidth; ++t) total += by_lane[t];
    for (int r = 0; r < R; ++r) sum[r] = lane(total, r);
  } else {
    for (int64_t t = 0; t < rest; ++t)
      for (int r = 0; r < R; ++r) sum[r] += lane(tail[r], static_cast<int>(t));
    for (int t = 0; t < kWidth; ++t)
      for (int r = 0; r < R; ++r) sum[r] += lane(sums[r], t);
  }
  for (int r = 0; r < R; ++r) {
    const float* row = scores + r * ld;
    float* o = out + r * ld_out;
    const float inverse = 1.0f / sum[r];
    for (int64_t j = 0; j < full; j += kWidth) store(o + j, load<V>(row + j) * inverse);
    if (rest > 0) store_first<I>(o + full, tail[r] * inverse, rest);
  }
}

template <class V, KernelIsa I, bool kMultiplyOnly>
KERNEL_INLINE void softmax_rows_by(float* scores, int64_t ld, const float* bias, int64_t ld_bias, int64_t n, float mul,
                                   float div, float* out, int64_t ld_out) {
  const auto bias_of = [&](int64_t i) { return bias ? bias + i * ld_bias : nullptr; };
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth)
    softmax_block<kWidth, V, I, kMultiplyOnly>(scores + i * ld, ld, bias_of(i), ld_bias, n, mul, div, out + i * ld_out, ld_out);
  for (; i + 4 <= n; i += 4)
    softmax_block<4, V, I, kMultiplyOnly>(scores + i * ld, ld, bias_of(i), ld_bias, n, mul, div, out + i * ld_out, ld_out);
  for (; i < n; ++i)
    softmax_block<1, V, I, kMultiplyOnly>(scores + i * ld, ld, bias_of(i), ld_bias, n, mul, div, out + i * ld_out, ld_out);
}

// Softmax of the scores times mul, divided by div (one of the two is 1), rounded as that expression is.
// Where both are powers of two, x * (mul / div): scaling by a power of two is exact (bar results below
// the smallest normal float, 1.2e-38), so the numbers are the same bit for bit, whether or not the compiler
// fuses the product with a bias's add, and a vector multiply costs a fraction of a division.
template <class V, KernelIsa I>
KERNEL_INLINE void softmax_rows_as(float* scores, int64_t ld, const float* bias, int64_t ld_bias, int64_t n, float mul,
                                   float div, float* out, int64_t ld_out) {
  const auto power_of_two = [](float x) {
    int exponent = 0;
    return std::frexp(x, &exponent) == 0.5f;
  };
  if (power_of_two(mul) && power_of_two(div))
    softmax_rows_by<V, I, true>(scores, ld, bias, ld_bias, n, mul / div, 1.0f, out, ld_out);
  else
    softmax_rows_by<V, I, false>(scores, ld, bias, ld_bias, n, mul, div, out, ld_out);
}

// C (rows x cols, ldc) = alpha A (rows x k, lda) B (k x cols, ldb), B's rows readable to a multiple of
// kWidth columns. Each block is R rows by N vectors of C: each load of B feeds R accumulators and each of
// A's values N of them, so that a step's loads (N of B, R of A) stay within what its R N FMAs take. The
// last vector stores `last` columns. Each C value sums its k products in order: the same numbers for the
// same operands, whatever the batch. Tiny products (n x n x d per head) cost less here than a BLAS call.
template <int R, int N, class V>
KERNEL_INLINE void product_block(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t k, float alpha,
                                 float* c, int64_t ldc, int64_t last) {
  V acc[R][N] = {};
  for (int64_t t = 0; t < k; ++t) {
    V bt[N];
    for (int v = 0; v < N; ++v) bt[v] = load<V>(b + t * ldb + v * kWidth);
    for (int r = 0; r < R; ++r) {
      const float x = a[r * lda + t];
      for (int v = 0; v < N; ++v) acc[r][v] += x * bt[v];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < N; ++v) {
      const V out = acc[r][v] * alpha;
      float* to = c + r * ldc + v * kWidth;
      if (v < N - 1 || last == kWidth)
        store(to, out);
      else
        std::memcpy(to, &out, static_cast<std::size_t>(last) * sizeof(float));
    }
}

template <class V>
KERNEL_INLINE void product(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows, int64_t k,
                           int64_t cols, float alpha, float* c, int64_t ldc) {
  int64_t j = 0;
  // Two vectors of columns at a time (6 rows: 12 sums in flight) where a register holds 16 floats.
  if constexpr (!std::is_same_v<V, Twin>)
    for (; j + 2 * kWidth <= cols; j += 2 * kWidth) {
      int64_t i = 0;
      for (; i + 6 <= rows; i += 6) product_block<6, 2, V>(a + i * lda, lda, b + j, ldb, k, alpha, c + i * ldc + j, ldc, kWidth);
      for (; i + 4 <= rows; i += 4) product_block<4, 2, V>(a + i * lda, lda, b + j, ldb, k, alpha, c + i * ldc + j, ldc, kWidth);
      for (; i < rows; ++i) product_block<1, 2, V>(a + i * lda, lda, b + j, ldb, k, alpha, c + i * ldc + j, ldc, kWidth);
    }
  for (; j < cols; j += kWidth) {
    const int64_t w = std::min(kWidth, cols - j);
    int64_t i = 0;
    // 8 independent sums keep both FMA units busy through each one's latency; 4, then 1, for the rest.
    // A Twin's 8 sums would take all 16 AVX2 registers and more: there, 4 at most.
    if constexpr (!std::is_same_v<V, Twin>)
      for (; i + 8 <= rows; i += 8) product_block<8, 1, V>(a + i * lda, lda, b + j, ldb, k, alpha, c + i * ldc + j, ldc, w);
    for (; i + 4 <= rows; i += 4) product_block<4, 1, V>(a + i * lda, lda, b + j, ldb, k, alpha, c + i * ldc + j, ldc, w);
    for (; i < rows; ++i) product_block<1, 1, V>(a + i * lda, lda, b + j, ldb, k, alpha, c + i * ldc + j, ldc, w);
  }
}

// out (d rows of n16) = k^T (k: n rows of d, row stride ld), zero past n: 16 x 16 blocks through registers
// (a last block of fewer than 16 keys filled with zero keys), the columns past a multiple of 16 one value
// at a time.
template <class V>
KERNEL_INLINE void transpose_keys(const float* k, int64_t ld, int64_t n, int64_t d, float* out, int64_t n16) {
  const int64_t d_blocks = d / kWidth * kWidth;
  for (int64_t j = 0; j < n; j += kWidth) {
    const int64_t keys = std::min(kWidth, n - j);
    for (int64_t t = 0; t < d_blocks; t += kWidth) {
      // Rows reached by stepping one pointer (only while a next row exists, so that it never points past
      // the rows): 16 offsets kept apart did not fit the registers beside the block, and their reloads
      // from the stack were a sixth of the kernel's samples.
      V m[kWidth];
      const float* from = k + j * ld + t;
      if (keys == kWidth) {
        for (int r = 0; r < kWidth; ++r) {
          m[r] = load<V>(from);
          if (r + 1 < kWidth) from += ld;
        }
      } else {
        for (int r = 0; r < kWidth; ++r) {
          m[r] = r < keys ? load<V>(from) : V{};
          if (r + 1 < keys) from += ld;
        }
      }
      transpose(m);
      float* to = out + t * n16 + j;
      for (int r = 0; r < kWidth; ++r) {
        store(to, m[r]);
        if (r + 1 < kWidth) to += n16;
      }
    }
  }
  for (int64_t t = d_blocks; t < d; ++t) {
    for (int64_t j = 0; j < n; ++j) out[t * n16 + j] = k[j * ld + t];
    std::fill(out + t * n16 + n, out + (t + 1) * n16, 0.0f);
  }
}

int64_t padded(int64_t n) { return (n + kWidth - 1) / kWidth * kWidth; }

// The products of each body, apart (not inlined), so that a profile tells them from the softmax.
using Product = void (*)(const float*, int64_t, const float*, int64_t, int64_t, int64_t, int64_t, float, float*, int64_t);
__attribute__((target("avx512f"), noinline)) void product_avx512(const float* a, int64_t lda, const float* b, int64_t ldb,
                                                                int64_t rows, int64_t k, int64_t cols, float alpha,
                                                                float* c, int64_t ldc) {
  product<Wide>(a, lda, b, ldb, rows, k, cols, alpha, c, ldc);
}
__attribute__((target("avx2,fma"), noinline)) void product_avx2(const float* a, int64_t lda, const float* b, int64_t ldb,
                                                           int64_t rows, int64_t k, int64_t cols, float alpha, float* c,
                                                           int64_t ldc) {
  product<Twin>(a, lda, b, ldb, rows, k, cols, alpha, c, ldc);
}
__attribute__((noinline)) void product_plain(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                                             int64_t k, int64_t cols, float alpha, float* c, int64_t ldc) {
  product<Wide>(a, lda, b, ldb, rows, k, cols, alpha, c, ldc);
}

template <class V, Product kProduct, KernelIsa I>
KERNEL_INLINE void attend_head_as(const HeadAttention& h, Scaling scaling) {
  const int64_t n = h.n, d = h.d;
  const float root = std::sqrt(static_cast<float>(h.d));
  const float alpha = scaling == Scaling::DivideQueries ? 1.0f / root : 1.0f;
  const float mul = scaling == Scaling::MultiplyScores ? std::pow(static_cast<float>(h.d), -0.5f) : 1.0f;
  const float div = scaling == Scaling::DivideScores ? root : 1.0f;
  // k^T in zero-padded rows, the scores n16 wide (whole vectors; past n, a key of zeros), and v where its
  // rows are not a multiple of 16 wide, copied into zero-padded rows the products read.
  thread_local std::vector<float> keys, scores, values;
  const int64_t n16 = padded(n), d16 = padded(d);
  keys.resize(static_cast<std::size_t>(d * n16));
  transpose_keys<V>(h.k, h.ld_qkv, n, d, keys.data(), n16);
  scores.resize(static_cast<std::size_t>(n * n16));
  kProduct(h.q, h.ld_qkv, keys.data(), n16, n, d, n16, alpha, scores.data(), n16);
  softmax_rows_as<V, I>(scores.data(), n16, h.bias, h.ld_bias, n, mul, div, h.probs, h.ld_probs);
  if (!h.ctx) return;
  const float* v = h.v;
  int64_t ld_v = h.ld_qkv;
  if (d != d16) {
    values.assign(static_cast<std::size_t>(n * d16), 0.0f);
    for (int64_t j = 0; j < n; ++j) std::memcpy(values.data() + j * d16, h.v + j * h.ld_qkv, static_cast<std::size_t>(d) * sizeof(float));
    v = values.data(), ld_v = d16;
  }
  kProduct(h.probs, h.ld_probs, v, ld_v, n, n, d, 1.0f, h.ctx, h.ld_ctx);
}

// One body per instruction set (function attributes, so that each inlines the templates for its own).
__attribute__((target("avx512f"))) void attend_head_avx512(const HeadAttention& h, Scaling s) { attend_head_as<Wide, product_avx512, KernelIsa::Avx512>(h, s); }
__attribute__((target("avx2,fma"))) void attend_head_avx2(const HeadAttention& h, Scaling s) { attend_head_as<Twin, product_avx2, KernelIsa::Avx2>(h, s); }
void attend_head_plain(const HeadAttention& h, Scaling s) { attend_head_as<Wide, product_plain, KernelIsa::Plain>(h, s); }

}  // namespace

bool cpu_has(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::Avx512: return __builtin_cpu_supports("avx512f");
    case KernelIsa::Avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case KernelIsa::Plain: return true;
  }
  return false;
}

void attend_head_with(const HeadAttention& h, Scaling scaling, KernelIsa isa) {
  switch (isa) {
    case KernelIsa::Avx512: return attend_head_avx512(h, scaling);
    case KernelIsa::Avx2: return attend_head_avx2(h, scaling);
    case KernelIsa::Plain: return attend_head_plain(h, scaling);
  }
}

const char* kernel_isa_name(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::Avx512: return "avx512";
    case KernelIsa::Avx2: return "avx2";
    case KernelIsa::Plain: return "plain";
  }
  return "?";
}

KernelIsa kernel_isa() {
  KernelIsa isa = cpu_has(KernelIsa::Avx512) ? KernelIsa::Avx512
                  : cpu_has(KernelIsa::Avx2) ? KernelIsa::Avx2
                                             : KernelIsa::Plain;
  const char* limit = std::getenv("ATTNSCAN_MAX_CPU_ISA");
  if (!limit || !*limit) return isa;
  std::string text(limit);
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  for (KernelIsa cap : {KernelIsa::Plain, KernelIsa::Avx2, KernelIsa::Avx512})
    if (text == kernel_isa_name(cap)) return std::min(isa, cap);
  throw std::invalid_argument("ATTNSCAN_MAX_CPU_ISA='" + std::string(limit) + "': expected avx512, avx2 or plain");
}

void attend_head(const HeadAttention& h, Scaling scaling) {
  static const KernelIsa chosen = kernel_isa();
  attend_head_with(h, scaling, chosen);
}

float softmax_exp(float x) { return exp_nonpositive(Wide{} + x)[0]; }

}  // namespace attnscan::kernels
