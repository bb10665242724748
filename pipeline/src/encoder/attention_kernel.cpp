#include "encoder/attention_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

namespace attnscan::kernels {

// 16 floats: one AVX-512 register, two AVX2 ones; aligned(4) lets it load from and store to any float.
typedef float Lanes __attribute__((vector_size(64), aligned(4)));
constexpr int64_t kWidth = 16;

namespace {

// exp(x) = 2^k e^r with k = round(x / ln 2), r = x - k ln 2 in [-ln2/2, ln2/2]; e^r by its Taylor series to
// r^7/7! (remainder < |r|^8/8! < 6e-9), 2^k from the exponent bits; on each lane, with no branch and no call.
__attribute__((always_inline)) inline void exp_nonpositive(const Lanes& x, Lanes& out) {
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693145751953125f, kLn2Lo = 1.42860682030941723e-6f;
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer held in the low bits
  const Lanes c = x < -87.3f ? Lanes{} - 87.3f : x;
  const Lanes shifted = c * kLog2e + kShift;
  const Lanes kf = shifted - kShift;
  const Lanes r = (c - kf * kLn2Hi) - kf * kLn2Lo;
  const Lanes p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
  typedef int32_t Ints __attribute__((vector_size(64)));
  const Ints k = __builtin_bit_cast(Ints, shifted) - 0x4b400000;  // the bits of kShift: what is left is k
  const Ints scale_bits = (k + 127) << 23;
  out = x < -87.3f ? Lanes{} : p * __builtin_bit_cast(Lanes, scale_bits);
}

}  // namespace

float softmax_exp(float x) {
  Lanes e;
  exp_nonpositive(Lanes{} + x, e);
  return e[0];
}

// One stage of a 16 x 16 transpose in registers: rows a and b, whose indices differ in bit h, swap the
// h-wide blocks that make bit h of a value's row and of its column trade places; after the stages for
// h = 1, 2, 4, 8 every value (r, c) is at (c, r).
constexpr int low_row(int h, int c) { return (c & h) ? kWidth + (c ^ h) : c; }
constexpr int high_row(int h, int c) { return (c & h) ? kWidth + c : (c | h); }
template <int H, int... C>
__attribute__((always_inline)) inline void swap_blocks(Lanes& a, Lanes& b, std::integer_sequence<int, C...>) {
  const Lanes low = __builtin_shufflevector(a, b, low_row(H, C)...);
  const Lanes high = __builtin_shufflevector(a, b, high_row(H, C)...);
  a = low, b = high;
}
template <int H>
__attribute__((always_inline)) inline void transpose_stage(Lanes (&m)[kWidth]) {
  for (int r = 0; r < kWidth; ++r)
    if (!(r & H)) swap_blocks<H>(m[r], m[r | H], std::make_integer_sequence<int, kWidth>{});
}
__attribute__((always_inline)) inline void transpose(Lanes (&m)[kWidth]) {
  transpose_stage<1>(m), transpose_stage<2>(m), transpose_stage<4>(m), transpose_stage<8>(m);
}

// The largest lane, by halving in registers (the largest of any order is the same number): lane t
// takes lane t + w where that is larger, w = 8, 4, 2, 1.
__attribute__((always_inline)) inline float largest(Lanes v) {
  const auto fold = [&v](const Lanes& upper) { v = upper > v ? upper : v; };
  fold(__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15));
  fold(__builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7));
  fold(__builtin_shufflevector(v, v, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3));
  fold(__builtin_shufflevector(v, v, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1));
  return v[0];
}

// Three passes over each row of scores (in place; whole vectors, lanes past n ignored): scale (and bias)
// with the running largest, exp with the running sum, then the division into the output row (n wide).
// The sum adds the last partial vector's values one by one, then the 16 partial sums in order: a chain
// of dependent adds, so R rows go together and their chains interleave (each row's numbers are those of
// the row alone). The last partial vector stays in a register across the passes: a vector load of
// values just stored one by one stalls the CPU for longer than the rest of the row takes.
template <int R>
__attribute__((always_inline)) inline void softmax_block(float* scores, int64_t ld, const float* bias, int64_t ld_bias,
                                                         int64_t n, float mul, float div, float* out, int64_t ld_out) {
  typedef int32_t Ints __attribute__((vector_size(64)));
  const int64_t full = n / kWidth * kWidth, rest = n - full;
  Ints lane;
  for (int t = 0; t < kWidth; ++t) lane[t] = t;
  const Ints real = lane < static_cast<int32_t>(rest);  // the tail's lanes that hold a key
  Lanes sums[R], tail[R];
  for (int r = 0; r < R; ++r) {
    float* row = scores + r * ld;
    const float* b = bias ? bias + r * ld_bias : nullptr;
    Lanes top = Lanes{} - __FLT_MAX__;
    for (int64_t j = 0; j < full; j += kWidth) {
      Lanes x = *reinterpret_cast<const Lanes*>(row + j) * mul / div;
      if (b) x += *reinterpret_cast<const Lanes*>(b + j);
      *reinterpret_cast<Lanes*>(row + j) = x;
      top = x > top ? x : top;
    }
    tail[r] = Lanes{};
    if (rest > 0) {
      tail[r] = *reinterpret_cast<const Lanes*>(row + full) * mul / div;
      if (b) {
        Lanes bt{};
        std::memcpy(&bt, b + full, static_cast<std::size_t>(rest) * sizeof(float));
        tail[r] += bt;
      }
      tail[r] = real ? tail[r] : Lanes{} - __FLT_MAX__;  // the row's largest is at least that already
      top = tail[r] > top ? tail[r] : top;
    }
    const float max = largest(top);
    sums[r] = Lanes{};
    for (int64_t j = 0; j < full; j += kWidth) {
      Lanes e;
      exp_nonpositive(*reinterpret_cast<const Lanes*>(row + j) - max, e);
      *reinterpret_cast<Lanes*>(row + j) = e;
      sums[r] += e;
    }
    if (rest > 0) exp_nonpositive(tail[r] - max, tail[r]);
  }
  float sum[R] = {};
  if constexpr (R == kWidth) {  // 16 rows' chains in the lanes of one vector: lane r adds row r's terms in order
    Lanes by_lane[kWidth], total{};
    std::copy(tail, tail + R, by_lane);
    transpose(by_lane);
    for (int64_t t = 0; t < rest; ++t) total += by_lane[t];
    std::copy(sums, sums + R, by_lane);
    transpose(by_lane);
    for (int64_t t = 0; t < kWidth; ++t) total += by_lane[t];
    for (int r = 0; r < R; ++r) sum[r] = total[r];
  } else {
    for (int64_t t = 0; t < rest; ++t)
      for (int r = 0; r < R; ++r) sum[r] += tail[r][t];
    for (int64_t t = 0; t < kWidth; ++t)
      for (int r = 0; r < R; ++r) sum[r] += sums[r][t];
  }
  for (int r = 0; r < R; ++r) {
    const float* row = scores + r * ld;
    float* o = out + r * ld_out;
    const float inverse = 1.0f / sum[r];
    for (int64_t j = 0; j < full; j += kWidth) *reinterpret_cast<Lanes*>(o + j) = *reinterpret_cast<const Lanes*>(row + j) * inverse;
    if (rest > 0) {
      const Lanes last = tail[r] * inverse;
      for (int64_t t = 0; t < rest; ++t) o[full + t] = last[t];
    }
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void softmax_rows(float* scores, int64_t ld,
                                                                               const float* bias, int64_t ld_bias,
                                                                               int64_t n, float mul, float div,
                                                                               float* out, int64_t ld_out) {
  const auto bias_of = [&](int64_t i) { return bias ? bias + i * ld_bias : nullptr; };
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth)
    softmax_block<kWidth>(scores + i * ld, ld, bias_of(i), ld_bias, n, mul, div, out + i * ld_out, ld_out);
  for (; i + 4 <= n; i += 4)
    softmax_block<4>(scores + i * ld, ld, bias_of(i), ld_bias, n, mul, div, out + i * ld_out, ld_out);
  for (; i < n; ++i) softmax_block<1>(scores + i * ld, ld, bias_of(i), ld_bias, n, mul, div, out + i * ld_out, ld_out);
}

namespace {

// C (rows x cols, ldc) = alpha A (rows x k, lda) B (k x cols, ldb), B's rows readable to a multiple of
// kWidth columns; R rows of C per block, whose R accumulators share each load of B. Each C value sums its
// k products in order: the same numbers for the same operands, whatever the batch. Tiny products (n x n
// x d per head) cost less here than a BLAS call. Always inlined, so that each clone of product() compiles
// it for its own instruction set.
template <int R>
__attribute__((always_inline)) inline void product_block(const float* a, int64_t lda, const float* b, int64_t ldb,
                                                         int64_t k, float alpha, float* c, int64_t ldc, int64_t cols) {
  Lanes acc[R] = {};
  for (int64_t t = 0; t < k; ++t) {
    const Lanes bt = *reinterpret_cast<const Lanes*>(b + t * ldb);
    for (int r = 0; r < R; ++r) acc[r] += a[r * lda + t] * bt;
  }
  for (int r = 0; r < R; ++r) {
    const Lanes out = acc[r] * alpha;
    if (cols == kWidth)
      *reinterpret_cast<Lanes*>(c + r * ldc) = out;
    else
      std::memcpy(c + r * ldc, &out, static_cast<std::size_t>(cols) * sizeof(float));
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void product(const float* a, int64_t lda, const float* b,
                                                                          int64_t ldb, int64_t rows, int64_t k,
                                                                          int64_t cols, float alpha, float* c,
                                                                          int64_t ldc) {
  for (int64_t j = 0; j < cols; j += kWidth) {
    const int64_t w = std::min(kWidth, cols - j);
    int64_t i = 0;
    // 8 independent sums keep both FMA units busy through each one's latency; 4, then 1, for the rest.
    for (; i + 8 <= rows; i += 8) product_block<8>(a + i * lda, lda, b + j, ldb, k, alpha, c + i * ldc + j, ldc, w);
    for (; i + 4 <= rows; i += 4) product_block<4>(a + i * lda, lda, b + j, ldb, k, alpha, c + i * ldc + j, ldc, w);
    for (; i < rows; ++i) product_block<1>(a + i * lda, lda, b + j, ldb, k, alpha, c + i * ldc + j, ldc, w);
  }
}

// out (d rows of n16) = k^T (k: n rows of d, row stride ld), zero past n: 16 x 16 blocks through registers,
// the rest one value at a time.
__attribute__((target_clones("avx512f", "avx2", "default"))) void transpose_keys(const float* k, int64_t ld, int64_t n,
                                                                                 int64_t d, float* out, int64_t n16) {
  const int64_t n_blocks = n / kWidth * kWidth, d_blocks = d / kWidth * kWidth;
  for (int64_t j = 0; j < n_blocks; j += kWidth)
    for (int64_t t = 0; t < d_blocks; t += kWidth) {
      Lanes m[kWidth];
      for (int r = 0; r < kWidth; ++r) m[r] = *reinterpret_cast<const Lanes*>(k + (j + r) * ld + t);
      transpose(m);
      for (int r = 0; r < kWidth; ++r) *reinterpret_cast<Lanes*>(out + (t + r) * n16 + j) = m[r];
    }
  for (int64_t j = 0; j < n; ++j)
    for (int64_t t = j < n_blocks ? d_blocks : 0; t < d; ++t) out[t * n16 + j] = k[j * ld + t];
  for (int64_t t = 0; t < d; ++t) std::fill(out + t * n16 + n, out + (t + 1) * n16, 0.0f);
}

int64_t padded(int64_t n) { return (n + kWidth - 1) / kWidth * kWidth; }

}  // namespace

void attend_head(const HeadAttention& h, Scaling scaling) {
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
  transpose_keys(h.k, h.ld_qkv, n, d, keys.data(), n16);
  scores.resize(static_cast<std::size_t>(n * n16));
  product(h.q, h.ld_qkv, keys.data(), n16, n, d, n16, alpha, scores.data(), n16);
  softmax_rows(scores.data(), n16, h.bias, h.ld_bias, n, mul, div, h.probs, h.ld_probs);
  if (!h.ctx) return;
  const float* v = h.v;
  int64_t ld_v = h.ld_qkv;
  if (d != d16) {
    values.assign(static_cast<std::size_t>(n * d16), 0.0f);
    for (int64_t j = 0; j < n; ++j) std::memcpy(values.data() + j * d16, h.v + j * h.ld_qkv, static_cast<std::size_t>(d) * sizeof(float));
    v = values.data(), ld_v = d16;
  }
  product(h.probs, h.ld_probs, v, ld_v, n, n, d, 1.0f, h.ctx, h.ld_ctx);
}

}  // namespace attnscan::kernels
