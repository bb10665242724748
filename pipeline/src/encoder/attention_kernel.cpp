#include "encoder/attention_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace attnscan::kernels {

namespace {

constexpr int64_t kLanes = 16;  // partial maxima and sums, so the compiler can keep them in vectors

// exp(x) = 2^k e^r with k = round(x / ln 2), r = x - k ln 2 in [-ln2/2, ln2/2]; e^r by its Taylor series to
// r^7/7! (remainder < |r|^8/8! < 6e-9), 2^k from the exponent bits. No branch and no call, so it vectorises.
inline float exp_nonpositive(float x) {
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693145751953125f, kLn2Lo = 1.42860682030941723e-6f;
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer held in the low bits
  const float c = x < -87.3f ? -87.3f : x;
  const float shifted = c * kLog2e + kShift;
  const float kf = shifted - kShift;
  const float r = (c - kf * kLn2Hi) - kf * kLn2Lo;
  const float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
  int32_t k;
  std::memcpy(&k, &shifted, sizeof k);
  k -= 0x4b400000;  // the bits of kShift: what is left is k
  const uint32_t scale_bits = static_cast<uint32_t>(k + 127) << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return x < -87.3f ? 0.0f : p * scale;
}

}  // namespace

float softmax_exp(float x) { return exp_nonpositive(x); }

// Largest and sum of a row in kLanes partial results, so the compiler keeps them in vectors.
inline float row_max(const float* row, int64_t n) {
  float lanes[kLanes];
  for (float& lane : lanes) lane = -__FLT_MAX__;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t t = 0; t < kLanes; ++t) lanes[t] = row[j + t] > lanes[t] ? row[j + t] : lanes[t];
  float max = -__FLT_MAX__;
  for (; j < n; ++j) max = row[j] > max ? row[j] : max;
  for (float lane : lanes) max = lane > max ? lane : max;
  return max;
}

inline float row_sum(const float* row, int64_t n) {
  float lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t t = 0; t < kLanes; ++t) lanes[t] += row[j + t];
  float sum = 0.0f;
  for (; j < n; ++j) sum += row[j];
  for (float lane : lanes) sum += lane;
  return sum;
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void softmax_row(float* row, const float* bias, int64_t n,
                                                                              float mul, float div) {
  if (bias)
    for (int64_t j = 0; j < n; ++j) row[j] = row[j] * mul / div + bias[j];
  else
    for (int64_t j = 0; j < n; ++j) row[j] = row[j] * mul / div;
  const float max = row_max(row, n);
  for (int64_t j = 0; j < n; ++j) row[j] = exp_nonpositive(row[j] - max);
  const float inverse = 1.0f / row_sum(row, n);
  for (int64_t j = 0; j < n; ++j) row[j] *= inverse;
}

namespace {

// 16 floats: one AVX-512 register, two AVX2 ones; aligned(4) lets it load from and store to any float.
typedef float Lanes __attribute__((vector_size(64), aligned(4)));
constexpr int64_t kWidth = 16;
constexpr int kRows = 4;  // rows of C per block: kRows accumulators share each load of B

// C (rows x cols, ldc) = alpha A (rows x k, lda) B (k x cols, ldb), B's rows readable to a multiple of
// kWidth columns. Each C value sums its k products in order: the same numbers for the same operands,
// whatever the batch. Tiny products (n x n x d per head) cost less here than a BLAS call. Always inlined,
// so that each clone of product() compiles it for its own instruction set.
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
    for (; i + kRows <= rows; i += kRows)
      product_block<kRows>(a + i * lda, lda, b + j, ldb, k, alpha, c + i * ldc + j, ldc, w);
    for (; i < rows; ++i) product_block<1>(a + i * lda, lda, b + j, ldb, k, alpha, c + i * ldc + j, ldc, w);
  }
}

int64_t padded(int64_t n) { return (n + kWidth - 1) / kWidth * kWidth; }

}  // namespace

void attend_head(const HeadAttention& h, Scaling scaling) {
  const int64_t n = h.n, d = h.d;
  const float root = std::sqrt(static_cast<float>(h.d));
  const float alpha = scaling == Scaling::DivideQueries ? 1.0f / root : 1.0f;
  const float mul = scaling == Scaling::MultiplyScores ? std::pow(static_cast<float>(h.d), -0.5f) : 1.0f;
  const float div = scaling == Scaling::DivideScores ? root : 1.0f;
  // k^T, and v where its rows are not a multiple of 16 wide, copied into zero-padded rows the products read.
  thread_local std::vector<float> keys, values;
  const int64_t n16 = padded(n), d16 = padded(d);
  keys.resize(static_cast<std::size_t>(d * n16));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t t = 0; t < d; ++t) keys[static_cast<std::size_t>(t * n16 + j)] = h.k[j * h.ld_qkv + t];
  for (int64_t t = 0; t < d; ++t) std::fill(keys.begin() + t * n16 + n, keys.begin() + (t + 1) * n16, 0.0f);
  product(h.q, h.ld_qkv, keys.data(), n16, n, d, n, alpha, h.probs, h.ld_probs);
  for (int64_t i = 0; i < n; ++i)
    softmax_row(h.probs + i * h.ld_probs, h.bias ? h.bias + i * h.ld_bias : nullptr, n, mul, div);
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
