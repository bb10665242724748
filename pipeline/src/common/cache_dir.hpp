#pragma once
#include <filesystem>

namespace attnscan {

// attnscan's cache: $ATTNSCAN_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/attnscan (models, remembered digests).
std::filesystem::path cache_dir();

}  // namespace attnscan
