// Test plugin: claims a detector API version this attnscan does not provide.
#include "attnscan/detector.hpp"

extern "C" __attribute__((visibility("default"))) int attnscan_detector_api_version() { return 999; }
extern "C" __attribute__((visibility("default"))) const attnscan::sdk::DetectorInfo* attnscan_detector_info() { return nullptr; }
extern "C" __attribute__((visibility("default"))) attnscan::sdk::Detector* attnscan_detector_create(const attnscan::sdk::Params*) {
  return nullptr;
}
extern "C" __attribute__((visibility("default"))) void attnscan_detector_destroy(attnscan::sdk::Detector*) {}
