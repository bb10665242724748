// Test plugin: a Double parameter whose default is the integer 1 (an easy mistake in C++).
#include "valid_shape.hpp"

namespace {
attnscan::sdk::DetectorInfo info() {
  return {"bad_default", "0.1", "ill-typed default", {"value"},
          {{"scale", attnscan::sdk::ParamType::Double, int64_t{1}, "a factor"}}};
}
}  // namespace
ATTNSCAN_DETECTOR(Constant, info)
