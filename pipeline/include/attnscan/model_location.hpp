#pragma once
#include <filesystem>

namespace attnscan {

// The model used when --model is not given: $ATTNSCAN_MODEL, else the folder the setup script fills,
// ${XDG_CACHE_HOME:-~/.cache}/attnscan/models/all-MiniLM-L6-v2.
std::filesystem::path default_model_dir();

}  // namespace attnscan
