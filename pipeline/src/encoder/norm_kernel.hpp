#pragma once
// LayerNorm with LibTorch 1.13's rounding, several rows at a time. ATen's CPU kernel (AVX2 build) computes
// each row's mean and variance with Welford steps over 8 lanes, in chunks of 16 vectors merged pairwise,
// then the lanes one by one, and normalises with two FMAs; every step waits for the one before, so a row
// takes ~0.7 ns per value. Here the same arithmetic runs on 4 rows side by side: the same numbers, at a
// fraction of the time. The encoder uses it only where it has checked, at the first use for a row width,
// that it gives exactly at::layer_norm's values (it falls back to ATen otherwise). Standard library only.
#include <cstdint>

namespace attnscan::kernels {

// Whether layer_norm_rows can run here (AVX2 and FMA).
bool layer_norm_rows_supported();

// y[r] = (x[r] - mean) / sqrt(var + eps) * gamma + beta for `rows` contiguous rows of n floats, in ATen's
// order of operations; y may be x.
void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t n, const float* gamma, const float* beta,
                     float eps);

}  // namespace attnscan::kernels
