// Test plugin: never returns on any example whose first sentence token is "boom" (it spins,
// ignoring everything: only the host can end it).
#include <atomic>

#include "valid_shape.hpp"

namespace {
std::atomic<unsigned long> g_spins{0};

class EndlessLoop : public Constant {
 public:
  using Constant::Constant;
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (const auto& e : batch)
      if (e.tokens.size() > 1 && e.tokens[1].text == "boom")
        for (;;) g_spins.fetch_add(1, std::memory_order_relaxed);
    Constant::score(batch, out);
  }
};
attnscan::sdk::DetectorInfo info() { return {ATTNSCAN_FAULT_NAME, "0.1", "test plugin that never returns", {"value"}, {}}; }
}  // namespace
ATTNSCAN_DETECTOR(EndlessLoop, info)
