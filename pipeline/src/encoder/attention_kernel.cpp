#include "encoder/attention_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
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

// Three passes over the row: scale (and bias) with the running largest, exp with the running sum,
// then the division. Whole vectors, the last partial one zero-padded; the sum adds the last values
// one by one, then the 16 partial sums in order.
__attribute__((target_clones("avx512f", "avx2", "default"))) void softmax_row(float* row, const float* bias, int64_t n,
                                                                              float mul, float div) {
  const int64_t full = n / kWidth * kWidth, rest = n - full;
  Lanes top = Lanes{} - __FLT_MAX__;
  for (int64_t j = 0; j < full; j += kWidth) {
    Lanes x = *reinterpret_cast<const Lanes*>(row + j) * mul / div;
    if (bias) x += *reinterpret_cast<const Lanes*>(bias + j);
    *reinterpret_cast<Lanes*>(row + j) = x;
    top = x > top ? x : top;
  }
  for (int64_t w = kWidth / 2; w > 0; w /= 2)  // halving: the largest of any order is the same number
    for (int64_t t = 0; t < w; ++t) top[t] = top[t + w] > top[t] ? top[t + w] : top[t];
  float max = top[0];
  for (int64_t j = full; j < n; ++j) {
    row[j] = bias ? row[j] * mul / div + bias[j] : row[j] * mul / div;
    max = row[j] > max ? row[j] : max;
  }
  Lanes sums{};
  for (int64_t j = 0; j < full; j += kWidth) {
    Lanes e;
    exp_nonpositive(*reinterpret_cast<const Lanes*>(row + j) - max, e);
    *reinterpret_cast<Lanes*>(row + j) = e;
    sums += e;
  }
  float sum = 0.0f;
  if (rest > 0) {
    Lanes tail{};
    std::memcpy(&tail, row + full, static_cast<std::size_t>(rest) * sizeof(float));
    Lanes e;
    exp_nonpositive(tail - max, e);
    std::memcpy(row + full, &e, static_cast<std::size_t>(rest) * sizeof(float));
    for (int64_t t = 0; t < rest; ++t) sum += e[t];
  }
  for (int64_t t = 0; t < kWidth; ++t) sum += sums[t];
  const float inverse = 1.0f / sum;
  for (int64_t j = 0; j < full; j += kWidth) *reinterpret_cast<Lanes*>(row + j) *= inverse;
  for (int64_t j = full; j < n; ++j) row[j] *= inverse;
}

namespace {

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
