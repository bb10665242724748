#include "encoder/layer_norm_kernel.hpp"

#include <cmath>

#include "encoder/lanes.hpp"

namespace attnscan::kernels {

using namespace lanes;

// Each row in whole vectors; its last (width % 16) values in one more vector whose other lanes are kept at 0.
__attribute__((target_clones("avx512f", "avx2", "default"))) void layer_norm_rows(float* x, int64_t rows, int64_t width,
                                                                                  const float* weight,
                                                                                  const float* bias, float eps) {
  const int64_t full = width / kWidth * kWidth, rest = width - full;
  const LaneBits lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const LaneBits in_tail = lane < static_cast<int32_t>(rest);
  const auto n = static_cast<float>(width);
  const Lanes w_tail = load_part(weight + full, rest, 0.0f), b_tail = bias ? load_part(bias + full, rest, 0.0f) : Lanes{};
  for (int64_t r = 0; r < rows; ++r, x += width) {
    const Lanes tail = load_part(x + full, rest, 0.0f);
    Lanes sums = tail;
    for (int64_t j = 0; j < full; j += kWidth) sums += load(x + j);
    const float mean = lane_sum(sums) / n;
    const Lanes tail_deviation = in_tail ? tail - mean : Lanes{};
    Lanes squares = tail_deviation * tail_deviation;
    for (int64_t j = 0; j < full; j += kWidth) {
      const Lanes deviation = load(x + j) - mean;
      squares += deviation * deviation;
    }
    const float scale = 1.0f / std::sqrt(lane_sum(squares) / n + eps);
    for (int64_t j = 0; j < full; j += kWidth)
      store(x + j, (load(x + j) - mean) * scale * load(weight + j) + (bias ? load(bias + j) : Lanes{}));
    const Lanes last = tail_deviation * scale * w_tail + b_tail;
    std::memcpy(x + full, &last, static_cast<std::size_t>(rest) * sizeof(float));
  }
}

}  // namespace attnscan::kernels
