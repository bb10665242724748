// Test plugin: its constructor throws; the exported entry point must not let it escape.
#include <stdexcept>

#include "attnscan/detector.hpp"

namespace {
class Refusing : public attnscan::sdk::Detector {
 public:
  explicit Refusing(const attnscan::sdk::Params&) { throw std::runtime_error("table file missing"); }
  void score(const std::vector<attnscan::sdk::Example>&, std::vector<attnscan::sdk::ExampleScores>&) const override {}
};
attnscan::sdk::DetectorInfo info() { return {"create_throws", "0.1", "constructor throws", {"value"}, {}}; }
}  // namespace
ATTNSCAN_DETECTOR(Refusing, info)
