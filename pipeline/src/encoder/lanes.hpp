#pragma once
// 16 fp32 lanes as GCC vector extensions, for kernels cloned per instruction set (target_clones): one
// AVX-512 register, two AVX2 ones, four SSE ones. Every helper is inlined, so that each clone compiles it for
// its own instruction set. Internal to the encoder's kernels (attention_kernel.cpp, layer_norm_kernel.cpp).
#include <cstdint>
#include <cstring>

namespace attnscan::kernels::lanes {

// aligned(4): loads from and stores to any float.
typedef float Lanes __attribute__((vector_size(64), aligned(4)));
typedef int32_t LaneBits __attribute__((vector_size(64), aligned(4)));
constexpr int64_t kWidth = 16;
#define ATTNSCAN_LANES inline __attribute__((always_inline))

template <typename T>
ATTNSCAN_LANES T splat(float x) {
  return T{} + x;
}
ATTNSCAN_LANES int32_t bits_of(float x) {
  int32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
ATTNSCAN_LANES float float_of(int32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}
ATTNSCAN_LANES LaneBits bits_of(Lanes x) { return reinterpret_cast<LaneBits>(x); }
ATTNSCAN_LANES Lanes float_of(LaneBits b) { return reinterpret_cast<Lanes>(b); }

ATTNSCAN_LANES Lanes load(const float* p) { return *reinterpret_cast<const Lanes*>(p); }
ATTNSCAN_LANES void store(float* p, Lanes v) { *reinterpret_cast<Lanes*>(p) = v; }

// The first `count` (< 16) values from p; the other lanes `fill`.
ATTNSCAN_LANES Lanes load_part(const float* p, int64_t count, float fill) {
  Lanes v = splat<Lanes>(fill);
  std::memcpy(&v, p, static_cast<std::size_t>(count) * sizeof(float));
  return v;
}

typedef float HalfLanes __attribute__((vector_size(32)));
typedef float QuarterLanes __attribute__((vector_size(16)));

ATTNSCAN_LANES HalfLanes low_half(Lanes v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7); }
ATTNSCAN_LANES HalfLanes high_half(Lanes v) { return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15); }
ATTNSCAN_LANES QuarterLanes low_half(HalfLanes v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3); }
ATTNSCAN_LANES QuarterLanes high_half(HalfLanes v) { return __builtin_shufflevector(v, v, 4, 5, 6, 7); }

// Pairwise, 16 -> 8 -> 4 -> 2 -> 1, in vectors as long as they are wider than one float.
ATTNSCAN_LANES float lane_max(Lanes v) {
  const HalfLanes h = low_half(v) > high_half(v) ? low_half(v) : high_half(v);
  const QuarterLanes q = low_half(h) > high_half(h) ? low_half(h) : high_half(h);
  const float a = q[0] > q[2] ? q[0] : q[2], b = q[1] > q[3] ? q[1] : q[3];
  return a > b ? a : b;
}

ATTNSCAN_LANES float lane_sum(Lanes v) {
  const HalfLanes h = low_half(v) + high_half(v);
  const QuarterLanes q = low_half(h) + high_half(h);
  return (q[0] + q[2]) + (q[1] + q[3]);
}

}  // namespace attnscan::kernels::lanes
