#pragma once
// What this machine can compute, decided in one place: the CPU's features as LibTorch and oneDNN see
// them, whether bf16 runs here (natively, emulated, or not at all), and the library versions that
// shape the numbers. Everything that offers or refuses a precision asks this.
#include <string>
#include <vector>

#include "encoder/encoder.hpp"

namespace attnscan {

// fp32 attention agrees within this (max absolute difference) across what may change the kernels
// oneDNN and BLAS pick: a pair alone or in a padded batch, another thread count, another CPU or
// ONEDNN_MAX_CPU_ISA. On the same machine and settings a rerun, a resume and merged shards are
// bit-identical. docs/engine.md, "Reproducibility"; tests/encoder/encoder_test.cpp and tests/e2e.
constexpr double kFp32AttentionAgreement = 1e-5;

enum class Bf16Support {
  Unavailable,  // LibTorch's oneDNN bf16 path would throw here
  Emulated,     // AVX-512 without bf16 instructions: oneDNN converts, often slower than fp32
  Native,       // AVX512_BF16 or AMX: bf16 dot products in hardware
};

struct ComputePlatform {
  std::string cpu_model;         // e.g. "AMD EPYC 7B13"
  std::string onednn_isa;        // the instruction set oneDNN uses, e.g. "avx2", "avx512_core_amx"
  std::string onednn_isa_limit;  // $ONEDNN_MAX_CPU_ISA when set, else empty
  std::string kernel_isa;        // the body attnscan's attention kernel runs: "avx512", "avx2" or "plain"
  std::string kernel_isa_limit;  // $ATTNSCAN_MAX_CPU_ISA when set, else empty
  std::vector<std::string> bf16_missing;  // CPU features LibTorch's bf16 path needs that are absent
  Bf16Support bf16 = Bf16Support::Unavailable;
  std::string libtorch_version, onednn_version, blas;
  std::string openblas;  // OpenBLAS's build and kernel set, e.g. "OpenBLAS 0.3.21 ... Zen"; empty when not loaded

  // Why bf16 cannot run here, e.g. "this CPU (...) lacks avx512bw, ..." (empty when it can).
  std::string bf16_missing_reason() const;
  // One line: why bf16 cannot run here and the alternative (empty when it can).
  std::string bf16_refusal() const;
  // "native (avx512_bf16)", "emulated (...)" or "unavailable (...)".
  std::string bf16_text() const;
  // What decides the numbers a run computes, on one line: kernels (oneDNN ISA), library versions.
  // A resume or merge across different lines is allowed and noted (docs/engine.md, reproducibility).
  std::string numerics() const;
  // Several lines for `attnscan info` and bug reports.
  std::string describe() const;
};

// Probed once per process (CPUID through cpuinfo, oneDNN's effective ISA, LibTorch's build).
const ComputePlatform& compute_platform();

// Throws Error, one line, when `precision` cannot run on this machine: names the missing CPU features
// (or the ONEDNN_MAX_CPU_ISA limit) and the alternative. `where` prefixes the message (an option name).
void require_precision(Precision precision, const std::string& where);

}  // namespace attnscan
