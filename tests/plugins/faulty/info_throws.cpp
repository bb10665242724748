// Test plugin: its info function throws; the exported entry point must not let it escape.
#include <stdexcept>

#include "valid_shape.hpp"

namespace {
attnscan::sdk::DetectorInfo info() { throw std::runtime_error("no info today"); }
}  // namespace
ATTNSCAN_DETECTOR(Constant, info)
