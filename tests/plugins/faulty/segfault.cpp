// Test plugin: dereferences a null pointer (SIGSEGV) on any example whose first sentence token is
// "boom"; scores 0.5 otherwise.
#include <csignal>

#include "valid_shape.hpp"

namespace {
class Segfault : public Constant {
 public:
  using Constant::Constant;
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (const auto& e : batch)
      if (e.tokens.size() > 1 && e.tokens[1].text == "boom") std::raise(SIGSEGV);  // what a wild pointer does
    Constant::score(batch, out);
  }
};
attnscan::sdk::DetectorInfo info() { return {ATTNSCAN_FAULT_NAME, "0.1", "test plugin that crashes", {"value"}, {}}; }
}  // namespace
ATTNSCAN_DETECTOR(Segfault, info)
