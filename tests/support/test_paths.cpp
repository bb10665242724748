#include "test_paths.hpp"

#include "model/model_location.hpp"

namespace attnscan::test {

std::filesystem::path source_dir() { return ATTNSCAN_SOURCE_DIR; }
std::filesystem::path fixture_dir() { return ATTNSCAN_FIXTURE_DIR; }
std::filesystem::path datasets_dir() { return source_dir().parent_path() / "shared" / "datasets"; }
std::filesystem::path real_model_dir() { return default_model_dir(); }

std::filesystem::path scratch_dir(const std::string& name) {
  auto dir = std::filesystem::path(ATTNSCAN_SCRATCH_DIR) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace attnscan::test
