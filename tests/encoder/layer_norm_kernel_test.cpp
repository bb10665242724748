// kernels::layer_norm_rows against LayerNorm written out in double precision.
#include "encoder/layer_norm_kernel.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace attnscan::kernels {
namespace {

void check(int64_t width, bool with_bias) {
  SCOPED_TRACE("width=" + std::to_string(width) + " bias=" + std::to_string(with_bias));
  const int64_t rows = 7;
  std::mt19937 rng(static_cast<unsigned>(width * 7 + with_bias));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(rows * width)), weight(static_cast<std::size_t>(width)),
      bias(static_cast<std::size_t>(width));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 3.0f + 4.0f * normal(rng) + static_cast<float>(i / width);  // offset rows
  for (auto& v : weight) v = 1.0f + 0.3f * normal(rng);
  for (auto& v : bias) v = 0.5f * normal(rng);
  const std::vector<float> input = x;
  const float eps = 1e-12f;
  layer_norm_rows(x.data(), rows, width, weight.data(), with_bias ? bias.data() : nullptr, eps);
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = input.data() + r * width;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < width; ++j) mean += in[j];
    mean /= static_cast<double>(width);
    for (int64_t j = 0; j < width; ++j) var += (in[j] - mean) * (in[j] - mean);
    var /= static_cast<double>(width);
    for (int64_t j = 0; j < width; ++j) {
      const double want = (in[j] - mean) / std::sqrt(var + eps) * weight[static_cast<std::size_t>(j)] +
                          (with_bias ? bias[static_cast<std::size_t>(j)] : 0.0);
      worst = std::max(worst, std::abs(x[static_cast<std::size_t>(r * width + j)] - want));
    }
  }
  EXPECT_LE(worst, 2e-6);
}

TEST(LayerNormRows, EqualsTheDoubleReferenceForEveryWidth) {
  for (int64_t width : {1, 8, 15, 16, 17, 32, 100, 384, 768, 1024})
    for (bool bias : {false, true}) check(width, bias);
}

TEST(LayerNormRows, AConstantRowBecomesItsBias) {
  std::vector<float> x(40, 2.5f), weight(40, 3.0f), bias(40);
  for (std::size_t j = 0; j < bias.size(); ++j) bias[j] = static_cast<float>(j);
  layer_norm_rows(x.data(), 1, 40, weight.data(), bias.data(), 1e-5f);
  for (std::size_t j = 0; j < x.size(); ++j) EXPECT_EQ(x[j], bias[j]);
}

}  // namespace
}  // namespace attnscan::kernels
