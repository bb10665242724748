// Test plugin: the right API version and ABI, but its info entry point returns null without a reason.
#include "attnscan/detector.hpp"

extern "C" __attribute__((visibility("default"))) int attnscan_detector_api_version() { return attnscan::sdk::kApiVersion; }
extern "C" __attribute__((visibility("default"))) const char* attnscan_detector_abi() {
  static const std::string f = attnscan::sdk::abi_fingerprint();
  return f.c_str();
}
extern "C" __attribute__((visibility("default"))) const attnscan::sdk::DetectorInfo* attnscan_detector_info(char*, std::size_t) {
  return nullptr;
}
extern "C" __attribute__((visibility("default"))) attnscan::sdk::Detector* attnscan_detector_create(const attnscan::sdk::Params*,
                                                                                                   char*, std::size_t) {
  return nullptr;
}
extern "C" __attribute__((visibility("default"))) void attnscan_detector_destroy(attnscan::sdk::Detector*) noexcept {}
