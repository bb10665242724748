// Built with -ffp-contract=off: every multiply and add rounds on its own, as in ATen's moments, and the
// two FMAs of the normalisation are written out. Everything but layer_norm_rows_supported is compiled for
// AVX2 + FMA (the pragma below); layer_norm_rows is called only where the CPU has them.
#include "encoder/norm_kernel.hpp"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace attnscan::kernels {

bool layer_norm_rows_supported() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace {

typedef float Lanes __attribute__((vector_size(32)));  // ATen's Vectorized<float> on AVX2
typedef float LanesAnywhere __attribute__((vector_size(32), aligned(4)));  // loads from any float
constexpr int64_t kLanes = 8, kChunk = 16, kRows = 4, kMaxDepth = 64;

// Running moments (the count is kept apart): per lane, or of a whole row, a mean and a sum of squared
// deviations.
template <typename T>
struct Moments {
  T mean{}, squares{};
};

// Merges moments b (count nb) into a (count na), ATen's AddMoments: c = nb / (na + nb).
template <typename T>
__attribute__((always_inline)) inline void merge(int64_t nb, const Moments<T>& b, int64_t na, Moments<T>& a) {
  const int64_t n = na + nb;
  const float c = n == 0 ? 0.0f : static_cast<float>(nb) / static_cast<float>(n);
  const T delta = b.mean - a.mean;
  a.mean = a.mean + c * delta;
  a.squares = a.squares + (b.squares + delta * delta * c * static_cast<float>(na));
}

// 1 / (j + 1) rounded to float for each step of a chunk: the numbers the loop divided out at every step,
// 2-6% of a row's time.
template <std::size_t... J>
constexpr std::array<float, sizeof...(J)> reciprocals(std::index_sequence<J...>) {
  return {1.0f / static_cast<float>(J + 1)...};
}
constexpr std::array<float, kChunk> kReciprocals = reciprocals(std::make_index_sequence<kChunk>());

int ceil_log2(int64_t x) {
  int r = 0;
  while ((int64_t{1} << r) < x) ++r;
  return r;
}

// R rows of n: mean and 1 / sqrt(var + eps) of each, as ATen's RowwiseMoments and LayerNorm kernel.
template <int R>
__attribute__((always_inline)) inline void row_moments(const float* x, int64_t n, float eps, float* mean, float* rstd) {
  const int64_t vectors = n / kLanes, chunks = (vectors + kChunk - 1) / kChunk;
  const int depth = ceil_log2(chunks);
  int64_t count[kMaxDepth];  // the same for every row: the stack's counts depend on n alone
  Moments<Lanes> stack[kMaxDepth][R];
  for (int level = 0; level < std::max(depth, 1); ++level) {
    count[level] = 0;
    for (int r = 0; r < R; ++r) stack[level][r] = {};
  }
  for (int64_t i = 0; i < chunks; ++i) {
    const int64_t steps = std::min(kChunk, vectors - i * kChunk);
    Moments<Lanes> chunk[R] = {};
    for (int64_t j = 0; j < steps; ++j) {  // Welford, with 1 / (j + 1) rounded to float
      const float c = kReciprocals[j];
      for (int r = 0; r < R; ++r) {
        const Lanes v = *reinterpret_cast<const LanesAnywhere*>(x + r * n + (i * kChunk + j) * kLanes);
        const Lanes delta = v - chunk[r].mean;
        chunk[r].mean = chunk[r].mean + delta * c;
        chunk[r].squares = chunk[r].squares + delta * (v - chunk[r].mean);
      }
    }
    for (int r = 0; r < R; ++r) merge(steps, chunk[r], count[0], stack[0][r]);
    count[0] += steps;
    // Pairwise: chunk pairs, then pairs of pairs, ... (the set bits of i + 1 say which levels are full).
    int64_t mask = i + 1;
    for (int level = 1; level < depth && (mask & 1) == 0; ++level, mask >>= 1) {
      for (int r = 0; r < R; ++r) {
        merge(count[level - 1], stack[level - 1][r], count[level], stack[level][r]);
        stack[level - 1][r] = {};
      }
      count[level] += count[level - 1];
      count[level - 1] = 0;
    }
  }
  for (int level = 1; level < depth; ++level) {
    for (int r = 0; r < R; ++r) merge(count[level], stack[level][r], count[0], stack[0][r]);
    count[0] += count[level];
  }
  // The last n % 8 values one Welford step at a time, then the lanes merged in.
  Moments<float> row[R] = {};
  for (int64_t t = vectors * kLanes, seen = 1; t < n; ++t, ++seen)
    for (int r = 0; r < R; ++r) {
      const float delta = x[r * n + t] - row[r].mean;
      row[r].mean = row[r].mean + delta / static_cast<float>(seen);
      row[r].squares = row[r].squares + delta * (x[r * n + t] - row[r].mean);
    }
  int64_t seen = n - vectors * kLanes;
  for (int64_t l = 0; l < kLanes; ++l, seen += vectors)
    for (int r = 0; r < R; ++r) merge(vectors, Moments<float>{stack[0][r].mean[l], stack[0][r].squares[l]}, seen, row[r]);
  for (int r = 0; r < R; ++r) {
    mean[r] = row[r].mean;
    rstd[r] = 1.0f / std::sqrt(row[r].squares / static_cast<float>(n) + eps);
  }
}

template <int R>
__attribute__((always_inline)) inline void normalise(const float* x, float* y, int64_t n, const float* gamma,
                                                     const float* beta, float eps) {
  float mean[R], rstd[R];
  row_moments<R>(x, n, eps, mean, rstd);
  const int64_t vectors = n / kLanes * kLanes;
  for (int r = 0; r < R; ++r) {  // fma(fma(x, rstd, -rstd mean), gamma, beta), ATen's two roundings
    const float scale = rstd[r], shift = -rstd[r] * mean[r];
    const __m256 s = _mm256_set1_ps(scale), t = _mm256_set1_ps(shift);
    for (int64_t j = 0; j < vectors; j += kLanes) {
      const __m256 v = _mm256_fmadd_ps(_mm256_loadu_ps(x + r * n + j), s, t);
      _mm256_storeu_ps(y + r * n + j, _mm256_fmadd_ps(v, _mm256_loadu_ps(gamma + j), _mm256_loadu_ps(beta + j)));
    }
    for (int64_t j = vectors; j < n; ++j) y[r * n + j] = std::fma(std::fma(x[r * n + j], scale, shift), gamma[j], beta[j]);
  }
}

}  // namespace

void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t n, const float* gamma, const float* beta,
                     float eps) {
  int64_t r = 0;
  for (; r + kRows <= rows; r += kRows) normalise<kRows>(x + r * n, y + r * n, n, gamma, beta, eps);
  for (; r < rows; ++r) normalise<1>(x + r * n, y + r * n, n, gamma, beta, eps);
}

#pragma GCC pop_options

}  // namespace attnscan::kernels
