// Test plugin: calls exit(0) on any example whose first sentence token is "boom".
#include <cstdlib>

#include "valid_shape.hpp"

namespace {
class ExitZero : public Constant {
 public:
  using Constant::Constant;
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (const auto& e : batch)
      if (e.tokens.size() > 1 && e.tokens[1].text == "boom") std::exit(0);
    Constant::score(batch, out);
  }
};
attnscan::sdk::DetectorInfo info() { return {ATTNSCAN_FAULT_NAME, "0.1", "test plugin that exits", {"value"}, {}}; }
}  // namespace
ATTNSCAN_DETECTOR(ExitZero, info)
