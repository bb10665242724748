#include "encoder/attention_kernel.hpp"

#include <cblas.h>

#include <cmath>
#include <cstring>

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

void attend_head(const HeadAttention& h, Scaling scaling) {
  const auto n = static_cast<int>(h.n), d = static_cast<int>(h.d);
  const float root = std::sqrt(static_cast<float>(h.d));
  const float alpha = scaling == Scaling::DivideQueries ? 1.0f / root : 1.0f;
  const float mul = scaling == Scaling::MultiplyScores ? std::pow(static_cast<float>(h.d), -0.5f) : 1.0f;
  const float div = scaling == Scaling::DivideScores ? root : 1.0f;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, d, alpha, h.q, static_cast<int>(h.ld_qkv), h.k,
              static_cast<int>(h.ld_qkv), 0.0f, h.probs, static_cast<int>(h.ld_probs));
  for (int64_t i = 0; i < h.n; ++i)
    softmax_row(h.probs + i * h.ld_probs, h.bias ? h.bias + i * h.ld_bias : nullptr, h.n, mul, div);
  if (h.ctx)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, d, n, 1.0f, h.probs, static_cast<int>(h.ld_probs), h.v,
                static_cast<int>(h.ld_qkv), 0.0f, h.ctx, static_cast<int>(h.ld_ctx));
}

}  // namespace attnscan::kernels
