// entropy: mean entropy (nats) of the attention rows; Clark et al.'s "broad attention".
#include <cmath>
#include <vector>

#include "../common/fast_log.hpp"
#include "attnscan/detector.hpp"

namespace {

// -sum a ln a over one head's n x n map: fast_log and 16 lanes of partial sums let the compiler use the
// CPU's widest vectors (one clone per instruction set, chosen when the plugin loads). Each lane adds
// kSteps terms in float, then that partial sum in double: converting every term to double took a fifth
// of the loop's operations. A zero weight adds exactly 0, a subnormal one less than 1e-36.
__attribute__((target_clones("avx512f", "avx2", "default"))) double map_entropy(const float* a, std::size_t count) {
  constexpr std::size_t kLanes = 16, kSteps = 4;
  double lanes[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes * kSteps <= count; i += kLanes * kSteps) {
    float part[kLanes] = {};
    for (std::size_t s = 0; s < kSteps; ++s)
      for (std::size_t k = 0; k < kLanes; ++k) part[k] += a[i + s * kLanes + k] * attnscan::detectors::fast_log(a[i + s * kLanes + k]);
    for (std::size_t k = 0; k < kLanes; ++k) lanes[k] -= static_cast<double>(part[k]);
  }
  for (; i + kLanes <= count; i += kLanes)
    for (std::size_t k = 0; k < kLanes; ++k)
      lanes[k] -= static_cast<double>(a[i + k] * attnscan::detectors::fast_log(a[i + k]));
  double total = 0;
  for (double lane : lanes) total += lane;
  for (; i < count; ++i) total -= static_cast<double>(a[i] * attnscan::detectors::fast_log(a[i]));
  return total;
}

class Entropy : public attnscan::sdk::Detector {
 public:
  explicit Entropy(const attnscan::sdk::Params&) {}
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const auto& e = batch[b];
      const std::size_t n = e.size();
      out[b].scores.assign(static_cast<std::size_t>(e.layers * e.heads), 0.0f);
      for (int64_t l = 0; l < e.layers; ++l)
        for (int64_t h = 0; h < e.heads; ++h)
          out[b].scores[static_cast<std::size_t>(l * e.heads + h)] =
              static_cast<float>(map_entropy(e.head(l, h), n * n) / static_cast<double>(n));
      // Uniform attention over the keys a query sees: ln n, or the mean of ln |window(i)| in a windowed layer.
      out[b].baseline.assign(static_cast<std::size_t>(e.layers), 0.0f);
      for (int64_t l = 0; l < e.layers; ++l) {
        double uniform = 0;
        for (std::size_t i = 0; i < n; ++i) uniform += std::log(static_cast<double>(e.visible_keys(l, i)));
        out[b].baseline[static_cast<std::size_t>(l)] = static_cast<float>(uniform / static_cast<double>(n));
      }
    }
  }
};

attnscan::sdk::DetectorInfo info() {
  return {"entropy", "1.4", "mean entropy of the attention rows in nats (uniform attention: ln n, or mean ln |window| in a windowed layer)", {"entropy"}, {}};
}

}  // namespace
ATTNSCAN_DETECTOR(Entropy, info)
