#pragma once
// Self-attention of one head of one example straight from the fused q/k/v projection into the stored
// probabilities and the merged context: q and v are read where the projection wrote them (k through one
// transposed copy), the context lands in its head's columns, the products are the kernel's own (register
// blocks; a BLAS call costs more than an n x n x d product) and the scaling, bias and softmax are three
// passes over each row in whole vectors, with a body for each instruction set (AVX-512, AVX2, plain).
// Standard library only (LibTorch stays in encoder.cpp).
#include <cstdint>

namespace attnscan::kernels {

// How a family scales q k^T (in its reference code's order, the rounding differs).
enum class Scaling { DivideScores, DivideQueries, MultiplyScores };

struct HeadAttention {
  const float* q = nullptr;  // n rows of d: token i's query at q + i * ld_qkv; k and v alike
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t ld_qkv = 0;
  const float* bias = nullptr;  // optional n x n (row stride ld_bias), added to the scaled scores
  int64_t ld_bias = 0;
  float* probs = nullptr;  // n x n output, row stride ld_probs
  int64_t ld_probs = 0;
  float* ctx = nullptr;  // optional n x d output (probs v), row stride ld_ctx
  int64_t ld_ctx = 0;
  int64_t n = 0, d = 0;
};

void attend_head(const HeadAttention& h, Scaling scaling);

// exp(x) for x <= 0, as the softmax needs it: relative error <= 4e-7 for x >= -87.3, exactly 0 below
// (where exp is under the smallest normal float, 1.2e-38), so a masked key (lowest float) weighs 0.
float softmax_exp(float x);

// The instruction sets attend_head has a body for; it runs the widest the CPU has. The AVX2 body (AVX2 and
// FMA) gives the AVX-512 body's numbers bit for bit; the plain body rounds differently where those fuse a
// multiply and an add (tests run each body the CPU has).
enum class KernelIsa { Plain, Avx2, Avx512 };
bool cpu_has(KernelIsa isa);
void attend_head_with(const HeadAttention& h, Scaling scaling, KernelIsa isa);
// The body attend_head runs: the widest the CPU has, at most $ATTNSCAN_MAX_CPU_ISA (avx512, avx2 or plain;
// as ONEDNN_MAX_CPU_ISA does for oneDNN). Throws std::invalid_argument naming another value.
KernelIsa kernel_isa();
const char* kernel_isa_name(KernelIsa isa);

}  // namespace attnscan::kernels
