#pragma once
// LayerNorm over the rows of a [rows, width] fp32 activation, in place: one pass for the mean, one for the
// variance around it, one that writes, all in 16-lane vectors cloned per instruction set. It replaces
// at::layer_norm where the encoder's input to the norm is a fresh activation nothing reads afterwards (no
// output tensor, no dispatch). Standard library only (LibTorch stays in encoder.cpp).
#include <cstdint>

namespace attnscan::kernels {

// x[r] = (x[r] - mean) / sqrt(var + eps) * weight + bias for each row r (row stride `width`); var is the
// biased variance, as LayerNorm's. bias may be null (none).
void layer_norm_rows(float* x, int64_t rows, int64_t width, const float* weight, const float* bias, float eps);

}  // namespace attnscan::kernels
