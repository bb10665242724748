// Test plugin: claims a detector API version this attnscan does not provide (999 for wrong_api;
// old_api claims the version before the current one, as a plugin built against the previous SDK).
#include "attnscan/detector.hpp"

#ifndef ATTNSCAN_FAULT_API_VERSION
#define ATTNSCAN_FAULT_API_VERSION 999
#endif

extern "C" __attribute__((visibility("default"))) int attnscan_detector_api_version() { return ATTNSCAN_FAULT_API_VERSION; }
extern "C" __attribute__((visibility("default"))) const attnscan::sdk::DetectorInfo* attnscan_detector_info() { return nullptr; }
extern "C" __attribute__((visibility("default"))) attnscan::sdk::Detector* attnscan_detector_create(const attnscan::sdk::Params*) {
  return nullptr;
}
extern "C" __attribute__((visibility("default"))) void attnscan_detector_destroy(attnscan::sdk::Detector*) {}
