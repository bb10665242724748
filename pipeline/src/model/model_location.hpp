#pragma once
#include <filesystem>

namespace attnscan {

// The folder the set-up scripts fill with models: $ATTNSCAN_CACHE/models, else
// ${XDG_CACHE_HOME:-~/.cache}/attnscan/models.
std::filesystem::path models_cache_dir();

// The model used when --model is not given: $ATTNSCAN_MODEL, else models_cache_dir()/all-MiniLM-L6-v2.
std::filesystem::path default_model_dir();

}  // namespace attnscan
