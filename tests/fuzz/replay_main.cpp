// Runs a fuzz target over files without libFuzzer: the seed corpus and every crash found so far
// (tests/fuzz/regressions/), in the ordinary and the sanitizer builds. A crash or abort fails it.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  int inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    if (!fs::exists(arg)) continue;  // a target without regressions yet
    std::vector<fs::path> files;
    if (fs::is_directory(arg))
      for (const auto& e : fs::directory_iterator(arg)) files.push_back(e.path());
    else
      files.push_back(arg);
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++inputs;
    }
  }
  std::printf("%d input(s) replayed without a crash\n", inputs);
  return inputs > 0 ? 0 : 1;
}
