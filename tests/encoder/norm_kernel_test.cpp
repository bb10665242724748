// kernels::layer_norm_rows against at::layer_norm, bit for bit: the encoder uses the kernel only where it
// gives LibTorch's own values (it checks at load), and this says the kernel does on this machine.
#include "encoder/norm_kernel.hpp"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace attnscan::kernels {
namespace {

// Rows of n: normal values, a row far from zero, a row with an outlier, a constant row.
at::Tensor rows_of(int64_t n, int64_t rows) {
  at::Tensor x = at::randn({rows, n}, at::kFloat);
  x[1] = x[1] * 0.01 + 100;
  x[2][n / 2] = 300;
  x[3] = 2.5;
  return x;
}

bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && std::memcmp(a.data_ptr<float>(), b.data_ptr<float>(), a.numel() * sizeof(float)) == 0;
}

TEST(LayerNormRows, GivesLibTorchsValuesBitForBit) {
  if (!layer_norm_rows_supported()) GTEST_SKIP() << "this CPU lacks AVX2 or FMA: the encoder keeps ATen's LayerNorm";
  const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
  if (capability && std::string(capability) == "default")
    GTEST_SKIP() << "ATEN_CPU_CAPABILITY=default: LibTorch rounds without FMAs, the encoder keeps ATen's LayerNorm";
  at::manual_seed(7);
  for (int64_t n : {1, 7, 8, 31, 32, 100, 128, 129, 384, 768, 1024, 1029, 4096})
    for (double eps : {1e-12, 1e-5}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " eps=" + std::to_string(eps));
      const int64_t rows = 13;  // 4 rows at a time, then one by one
      const at::Tensor x = rows_of(n, rows), w = 1 + at::randn({n}) * 0.2, b = at::randn({n}) * 0.1;
      const at::Tensor want = at::layer_norm(x, {n}, w, b, eps);
      at::Tensor got = at::empty_like(x);
      layer_norm_rows(x.data_ptr<float>(), got.data_ptr<float>(), rows, n, w.data_ptr<float>(), b.data_ptr<float>(),
                      static_cast<float>(eps));
      EXPECT_TRUE(same_bits(got, want)) << "largest difference " << (got - want).abs().max().item<float>();
      at::Tensor in_place = x.clone();
      layer_norm_rows(in_place.data_ptr<float>(), in_place.data_ptr<float>(), rows, n, w.data_ptr<float>(),
                      b.data_ptr<float>(), static_cast<float>(eps));
      EXPECT_TRUE(same_bits(in_place, want)) << "in place";
    }
}

}  // namespace
}  // namespace attnscan::kernels
