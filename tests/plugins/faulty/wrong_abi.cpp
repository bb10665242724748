// Test plugin: a correct detector, compiled with another C++ ABI setting (see tests/CMakeLists.txt:
// -D_GLIBCXX_USE_CXX11_ABI=0, or -D_GLIBCXX_DEBUG for debug_mode.so).
#include "valid_shape.hpp"

namespace {
attnscan::sdk::DetectorInfo info() { return {ATTNSCAN_FAULT_NAME, "0.1", "built with another ABI", {"value"}, {}}; }
}  // namespace
ATTNSCAN_DETECTOR(Constant, info)
