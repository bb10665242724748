// The one place that decides what this machine can compute (see platform.hpp). CPU features come
// from cpuinfo, the library LibTorch itself asks before its oneDNN bf16 path; the instruction set
// from oneDNN, which honours ONEDNN_MAX_CPU_ISA.
#include "encoder/platform.hpp"

#include <cpuinfo.h>
#include <dlfcn.h>
#include <link.h>
#include <oneapi/dnnl/dnnl.h>
#include <torch/csrc/api/include/torch/version.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "common/error.hpp"
#include "encoder/attention_kernel.hpp"

namespace attnscan {

namespace {

std::string onednn_isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "isa " + std::to_string(unsigned(isa));
  }
}

// oneDNN's ISA values are bit sets: an ISA includes another when it has all its bits.
bool includes(dnnl_cpu_isa_t isa, dnnl_cpu_isa_t part) { return (unsigned(isa) & unsigned(part)) == unsigned(part); }

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown CPU";
}

// The BLAS library really loaded into this process (LibTorch's batched matmul uses it).
std::string loaded_blas() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        name = name.substr(name.find_last_of('/') + 1);
        if (name.find("blas") != std::string::npos || name.find("mkl_rt") != std::string::npos) {
          auto& s = *static_cast<std::string*>(out);
          s += (s.empty() ? "" : ", ") + name;
        }
        return 0;
      },
      &found);
  return found.empty() ? "none loaded" : found;
}

// OpenBLAS's own description (version, build options and, in Debian's DYNAMIC_ARCH build, the kernels
// it chose for this CPU), when loaded.
std::string loaded_openblas() {
  using Text = char* (*)();
  auto config = reinterpret_cast<Text>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  return config ? config() : "";
}

ComputePlatform probe() {
  ComputePlatform p;
  p.cpu_model = cpu_model_name();
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  p.onednn_isa = onednn_isa_name(isa);
  if (const char* limit = std::getenv("ONEDNN_MAX_CPU_ISA"); limit && *limit) p.onednn_isa_limit = limit;
  try {
    p.kernel_isa = kernels::kernel_isa_name(kernels::kernel_isa());
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  if (const char* limit = std::getenv("ATTNSCAN_MAX_CPU_ISA"); limit && *limit) p.kernel_isa_limit = limit;
  const dnnl_version_t* v = dnnl_version();
  p.onednn_version = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  p.libtorch_version = TORCH_VERSION;
  p.blas = loaded_blas();
  p.openblas = loaded_openblas();
  // LibTorch 1.13's mkldnn bf16 check: cpuinfo's avx512bw, avx512vl and avx512dq.
  const bool cpuinfo_ok = cpuinfo_initialize();
  if (!cpuinfo_ok || !cpuinfo_has_x86_avx512bw()) p.bf16_missing.push_back("avx512bw");
  if (!cpuinfo_ok || !cpuinfo_has_x86_avx512vl()) p.bf16_missing.push_back("avx512vl");
  if (!cpuinfo_ok || !cpuinfo_has_x86_avx512dq()) p.bf16_missing.push_back("avx512dq");
  if (!p.bf16_missing.empty() || !includes(isa, dnnl_cpu_isa_avx512_core))
    p.bf16 = Bf16Support::Unavailable;
  else if (includes(isa, dnnl_cpu_isa_avx512_core_bf16) || includes(isa, dnnl_cpu_isa_avx512_core_amx))
    p.bf16 = Bf16Support::Native;
  else
    p.bf16 = Bf16Support::Emulated;
  return p;
}

}  // namespace

const ComputePlatform& compute_platform() {
  static const ComputePlatform platform = probe();
  return platform;
}

std::string ComputePlatform::bf16_missing_reason() const {
  if (bf16 != Bf16Support::Unavailable) return "";
  if (bf16_missing.empty())
    return "oneDNN is limited to " + onednn_isa + " (ONEDNN_MAX_CPU_ISA=" + onednn_isa_limit +
           "), below the AVX-512 its bf16 kernels need";
  std::string list;
  for (const auto& f : bf16_missing) list += (list.empty() ? "" : ", ") + f;
  return "this CPU (" + cpu_model + ") lacks " + list + ", which LibTorch's oneDNN bf16 path needs";
}

std::string ComputePlatform::bf16_refusal() const {
  const std::string why = bf16_missing_reason();
  return why.empty() ? "" : "bf16 cannot run here: " + why + "; use fp32 (the default)";
}

std::string ComputePlatform::bf16_text() const {
  switch (bf16) {
    case Bf16Support::Native:  // AVX512-BF16 alone measured 0.7x fp32's speed (docs/engine.md); AMX 2-2.7x
      return "native (" + onednn_isa +
             (onednn_isa.find("amx") == std::string::npos ? "; without AMX bf16 measured slower than fp32, docs/engine.md" : "") + ")";
    case Bf16Support::Emulated:
      return "emulated (AVX-512 without bf16 instructions: oneDNN converts, often slower than fp32)";
    case Bf16Support::Unavailable: break;
  }
  return "unavailable (" + bf16_missing_reason() + ")";
}

// attnscan's own kernels (attention_kernel.cpp): raised whenever one of them rounds
// differently, so that a resume across such a change is noted as one with other numerics.
// r4: the AVX2 body fuses multiplies and adds, as the AVX-512 one does.
constexpr int kKernelRevision = 4;

std::string ComputePlatform::numerics() const {
  return "oneDNN " + onednn_version + " " + onednn_isa + ", LibTorch " + libtorch_version + ", BLAS " + blas +
         (openblas.empty() ? "" : " (" + openblas + ")") + ", attnscan kernels r" + std::to_string(kKernelRevision) + " " +
         kernel_isa;
}

std::string ComputePlatform::describe() const {
  return "cpu: " + cpu_model + "\n" +                                                                   //
         "oneDNN: " + onednn_version + ", instruction set " + onednn_isa +                               //
         (onednn_isa_limit.empty() ? "" : " (limited by ONEDNN_MAX_CPU_ISA=" + onednn_isa_limit + ")") +  //
         "\nLibTorch: " + libtorch_version + " (CPU)\nBLAS: " + blas +                                   //
         (openblas.empty() ? "" : " (" + openblas + ")") + "\nattnscan kernels: " + kernel_isa +                  //
         (kernel_isa_limit.empty() ? "" : " (limited by ATTNSCAN_MAX_CPU_ISA=" + kernel_isa_limit + ")") +        //
         "\nbf16: " + bf16_text() + "\n";
}

LinearBackend resolve_linear_backend(const EncoderOptions& options) {
  // oneDNN with the weights packed once used 8% less CPU than OpenBLAS's own kernels for the same fp32 run
  // on AVX2, AVX-512 and AMX (docs/performance.md), and 3x less where OpenBLAS misses the CPU (Prescott).
  if (options.linear == LinearBackend::Auto) return LinearBackend::OneDnn;
  const bool blas_can = options.precision == Precision::F32 && !compute_platform().openblas.empty();
  if (options.linear == LinearBackend::OpenBlas && !blas_can) return LinearBackend::OneDnn;
  return options.linear;
}

void require_precision(Precision precision, const std::string& where) {
  if (precision != Precision::BF16) return;
  const std::string refusal = compute_platform().bf16_refusal();
  if (!refusal.empty()) throw Error(where + ": " + refusal);
}

}  // namespace attnscan
