#pragma once
#include <filesystem>
#include <ostream>
#include <vector>

namespace attnscan {
// Merges the complete shard files i/N of one run into `out`, equal in content to a single run.
// Refuses missing, duplicated or incompatible shards, naming them.
void merge_shards(const std::filesystem::path& out, const std::vector<std::filesystem::path>& shards, bool overwrite,
                  std::ostream& log);
}  // namespace attnscan
