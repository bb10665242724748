// Test plugin: throws on any example whose first sentence token is "boom".
#include <stdexcept>

#include "attnscan/detector.hpp"

namespace {
class Throwing : public attnscan::sdk::Detector {
 public:
  explicit Throwing(const attnscan::sdk::Params&) {}
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (std::size_t b = 0; b < batch.size(); ++b) {
      if (batch[b].tokens.size() > 1 && batch[b].tokens[1].text == "boom") throw std::runtime_error("boom token seen");
      out[b].scores.assign(static_cast<std::size_t>(batch[b].layers * batch[b].heads), 0.5f);
      out[b].baseline.assign(static_cast<std::size_t>(batch[b].layers), 0.5f);
    }
  }
};
attnscan::sdk::DetectorInfo info() { return {"throwing", "0.1", "test plugin that throws", {"value"}, {}}; }
}  // namespace
ATTNSCAN_DETECTOR(Throwing, info)
