// Any bytes as a model.safetensors file: the header parser accepts it (and every tensor it lists
// lies inside the file) or throws attnscan::Error.
#include <cstdlib>

#include "common/error.hpp"
#include "model/safetensors.hpp"
#include "fuzz_input.hpp"

using namespace attnscan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto path = fuzz::as_file(data, size, ".safetensors");
  try {
    const SafetensorsFile f(path);
    for (const auto& t : f.tensors()) {
      if (t.nbytes > 0 && t.data == nullptr) std::abort();
      if (t.nbytes > 0) {  // touch both ends: a tensor outside the mapped file would crash here
        volatile std::byte first = t.data[0], last = t.data[t.nbytes - 1];
        (void)first;
        (void)last;
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
