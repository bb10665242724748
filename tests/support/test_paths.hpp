#pragma once
// Where tests find things that live outside the repository. Tests that need one of them call
// GTEST_SKIP() with a message naming what is missing.
#include <filesystem>

namespace attnscan::test {

std::filesystem::path source_dir();   // repository root
std::filesystem::path fixture_dir();  // generated reference fixtures (build tree)
std::filesystem::path datasets_dir(); // ../shared/datasets beside the repository
std::filesystem::path real_model_dir();  // the default model (all-MiniLM-L6-v2)
std::filesystem::path scratch_dir(const std::string& name);  // fresh, empty, under the build tree

}  // namespace attnscan::test
