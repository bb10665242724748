#pragma once
#include <filesystem>
#include <ostream>
#include <vector>

namespace attnscan {
// Merges the complete shard files i/N of one run into `out`, equal in content to a single run.
// Refuses missing, duplicated or incompatible shards, naming them. virtual_attention: every column is
// copied but the attention, which stays in the shards (an HDF5 virtual dataset over them, relative paths).
void merge_shards(const std::filesystem::path& out, const std::vector<std::filesystem::path>& shards, bool overwrite,
                  bool virtual_attention, std::ostream& log);
}  // namespace attnscan
