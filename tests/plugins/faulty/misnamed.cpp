// Test plugin: built as misnamed.so but declares another detector name.
#include "valid_shape.hpp"

namespace {
attnscan::sdk::DetectorInfo info() { return {"something_else", "0.1", "file name and name differ", {"value"}, {}}; }
}  // namespace
ATTNSCAN_DETECTOR(Constant, info)
