// entropy: mean entropy (nats) of the attention rows; Clark et al.'s "broad attention".
#include <cmath>

#include "attnscan/detector.hpp"

namespace {

class Entropy : public attnscan::sdk::Detector {
 public:
  explicit Entropy(const attnscan::sdk::Params&) {}
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const auto& e = batch[b];
      const std::size_t n = e.size();
      out[b].scores.assign(static_cast<std::size_t>(e.layers * e.heads), 0.0f);
      for (int64_t l = 0; l < e.layers; ++l)
        for (int64_t h = 0; h < e.heads; ++h) {
          const float* a = e.head(l, h);
          // Single-precision logarithms (the values are floats; 2-3x faster than double's), summed in double.
          double total = 0;
          for (std::size_t i = 0; i < n * n; ++i)
            if (a[i] > 0) total -= static_cast<double>(a[i] * std::log(a[i]));
          out[b].scores[static_cast<std::size_t>(l * e.heads + h)] = static_cast<float>(total / static_cast<double>(n));
        }
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
  return {"entropy", "1.1", "mean entropy of the attention rows in nats (uniform attention: ln n, or mean ln |window| in a windowed layer)", {"entropy"}, {}};
}

}  // namespace
ATTNSCAN_DETECTOR(Entropy, info)
