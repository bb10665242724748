// Test plugin: scores +inf at layer 1, head 2 of any example whose first sentence token is "boom"
// (or -inf baseline when the token is "minus"); 0.5 elsewhere.
#include <limits>

#include "valid_shape.hpp"

namespace {
class ReturnsInf : public Constant {
 public:
  using Constant::Constant;
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    Constant::score(batch, out);
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const auto& e = batch[b];
      const std::string first = e.tokens.size() > 1 ? e.tokens[1].text : "";
      if (first == "boom" && e.layers > 1 && e.heads > 2)
        out[b].scores[static_cast<std::size_t>(1 * e.heads + 2)] = std::numeric_limits<float>::infinity();
      if (first == "minus") out[b].baseline.back() = -std::numeric_limits<float>::infinity();  // the last layer
      if (first == "nan") out[b].scores[0] = attnscan::sdk::kUndefined;  // NaN is allowed: undefined
    }
  }
};
attnscan::sdk::DetectorInfo info() { return {ATTNSCAN_FAULT_NAME, "0.1", "test plugin that returns infinities", {"value"}, {}}; }
}  // namespace
ATTNSCAN_DETECTOR(ReturnsInf, info)
