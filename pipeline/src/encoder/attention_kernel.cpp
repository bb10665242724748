#include "encoder/attention_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "encoder/lanes.hpp"

namespace attnscan::kernels {

using namespace lanes;

namespace {

// exp(x) = 2^k e^r with k = round(x / ln 2), r = x - k ln 2 in [-ln2/2, ln2/2]; e^r by its Taylor series to
// r^7/7! (remainder < |r|^8/8! < 6e-9), 2^k from the exponent bits. No branch and no call: T is a float or
// 16 lanes of them.
template <typename T>
ATTNSCAN_LANES T exp_nonpositive(T x) {
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693145751953125f, kLn2Lo = 1.42860682030941723e-6f;
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer held in the low bits
  const T floor = splat<T>(-87.3f);
  const T c = x < floor ? floor : x;
  const T shifted = c * kLog2e + kShift;
  const T kf = shifted - kShift;
  const T r = (c - kf * kLn2Hi) - kf * kLn2Lo;
  const T p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
  const auto k = bits_of(shifted) - 0x4b400000;  // the bits of kShift: what is left is k
  const T scale = float_of((k + 127) << 23);
  return x < floor ? splat<T>(0.0f) : p * scale;
}

}  // namespace

float softmax_exp(float x) { return exp_nonpositive(x); }

// Whole vectors over the row, the last `rest` values (< 16) in one more vector padded with the lowest
// float, which the exponential turns into 0: no scalar loop, whatever n.
__attribute__((target_clones("avx512f", "avx2", "default"))) void softmax_row(float* row, const float* bias,
                                                                              int64_t n) {
  constexpr float kLowest = -__FLT_MAX__;
  const int64_t full = n / kWidth * kWidth, rest = n - full;
  Lanes maxima = splat<Lanes>(kLowest);
  for (int64_t j = 0; j < full; j += kWidth) {
    const Lanes x = bias ? load(row + j) + load(bias + j) : load(row + j);
    if (bias) store(row + j, x);
    maxima = x > maxima ? x : maxima;
  }
  Lanes tail = splat<Lanes>(kLowest);
  if (rest) {
    const Lanes x = load_part(row + full, rest, 0.0f) + (bias ? load_part(bias + full, rest, 0.0f) : Lanes{});
    std::memcpy(&tail, &x, static_cast<std::size_t>(rest) * sizeof(float));
    maxima = tail > maxima ? tail : maxima;
  }
  const float max = lane_max(maxima);
  Lanes sums{};
  for (int64_t j = 0; j < full; j += kWidth) {
    const Lanes e = exp_nonpositive(load(row + j) - max);
    store(row + j, e);
    sums += e;
  }
  tail = exp_nonpositive(tail - max);
  const float inverse = 1.0f / lane_sum(sums + tail);
  for (int64_t j = 0; j < full; j += kWidth) store(row + j, load(row + j) * inverse);
  const Lanes last = tail * inverse;
  std::memcpy(row + full, &last, static_cast<std::size_t>(rest) * sizeof(float));
}

namespace {

constexpr int kRows = 4;  // rows of C per block: kRows accumulators share each load of B

// C (rows x cols, ldc) = alpha A (rows x k, lda) B (k x cols, ldb), B's rows readable to a multiple of
// kWidth columns. Each C value sums its k products in order: the same numbers for the same operands,
// whatever the batch. Tiny products (n x n x d per head) cost less here than a BLAS call.
template <int R>
ATTNSCAN_LANES void product_block(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t k, float alpha,
                                  float* c, int64_t ldc, int64_t cols) {
  Lanes acc[R] = {};
  for (int64_t t = 0; t < k; ++t) {
    const Lanes bt = load(b + t * ldb);
    for (int r = 0; r < R; ++r) acc[r] += a[r * lda + t] * bt;
  }
  for (int r = 0; r < R; ++r) {
    const Lanes out = acc[r] * alpha;
    if (cols == kWidth)
      store(c + r * ldc, out);
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
  // The scale multiplies each score in the product's output pass (a division per score cost a tenth of the
  // softmax); the family's reference divides the scores or the queries: within an ulp of each score.
  const float alpha = scaling == Scaling::MultiplyScores ? std::pow(static_cast<float>(h.d), -0.5f) : 1.0f / root;
  // k^T, and v where its rows are not a multiple of 16 wide, copied into zero-padded rows the products read.
  thread_local std::vector<float> keys, values;
  const int64_t n16 = padded(n), d16 = padded(d);
  keys.assign(static_cast<std::size_t>(d * n16), 0.0f);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t t = 0; t < d; ++t) keys[static_cast<std::size_t>(t * n16 + j)] = h.k[j * h.ld_qkv + t];
  product(h.q, h.ld_qkv, keys.data(), n16, n, d, n, alpha, h.probs, h.ld_probs);
  for (int64_t i = 0; i < n; ++i)
    softmax_row(h.probs + i * h.ld_probs, h.bias ? h.bias + i * h.ld_bias : nullptr, n);
  if (!h.ctx) return;
  const float* v = h.v;
  int64_t ld_v = h.ld_qkv;
  if (d != d16) {
    values.assign(static_cast<std::size_t>(n * d16), 0.0f);
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(values.data() + j * d16, h.v + j * h.ld_qkv, static_cast<std::size_t>(d) * sizeof(float));
    v = values.data(), ld_v = d16;
  }
  product(h.probs, h.ld_probs, v, ld_v, n, n, d, 1.0f, h.ctx, h.ld_ctx);
}

}  // namespace attnscan::kernels
