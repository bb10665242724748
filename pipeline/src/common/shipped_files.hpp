#pragma once
// The configurations and sample data an installed attnscan ships in PREFIX/share/attnscan (configs/,
// data/, python/). A relative path that does not exist from the current folder is looked up there, so
// `attnscan run -c configs/default.yaml` works from any folder: in the container image, the current
// folder is the host's.
#include <filesystem>

namespace attnscan {

// PREFIX/share/attnscan beside PREFIX/bin/attnscan, or empty (run from the build tree).
std::filesystem::path shipped_dir();

// `path` itself, unless it is relative, absent from the current folder and present in shipped_dir().
std::filesystem::path given_or_shipped(const std::filesystem::path& path);

}  // namespace attnscan
