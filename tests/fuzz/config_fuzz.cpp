// Any bytes as a YAML configuration: loaded and checked, or refused with attnscan's error naming
// the file (ConfigError or Error), never another exception or a crash.
#include "config/run_config.hpp"
#include "fuzz_input.hpp"

using namespace attnscan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto path = fuzz::as_file(data, size, ".yaml");
  try {
    ConfigBuilder b;
    b.load_yaml(path);
    b.build();
    b.dump();
  } catch (const Error&) {
  }
  return 0;
}
