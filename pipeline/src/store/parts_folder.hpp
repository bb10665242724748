#pragma once
// The OUT.h5.parts folder of an unfinished run: one committed file per block, and the identity
// (model, dataset, shard, content options) that a resume must match.
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <set>
#include <string>

#include "store/output_file.hpp"

namespace attnscan {

std::filesystem::path parts_dir(const std::filesystem::path& out);
std::string block_name(uint64_t block);  // block-NNNNNNNNNN.h5

void write_identity(const std::filesystem::path& dir, const RunIdentity& id, int shard_index, int shard_count);
RunIdentity read_identity(const std::filesystem::path& dir, std::string& shard);

// OUT.h5.parts/numerics.txt: one line per distinct numerics (kernels, library versions, threads) that
// computed blocks of this output. Adds `line` when it is new (saying so in `log` when blocks computed
// elsewhere exist) and returns every line, oldest first.
std::string note_numerics(const std::filesystem::path& dir, const std::string& line, std::ostream& log);

// Blocks committed so far (reads only: a running writer may be using the folder).
std::set<uint64_t> committed_blocks(const std::filesystem::path& dir);
// Removes the leftovers of interrupted commits (*.tmp, *.spill); only the folder's writer may call it.
void remove_interrupted_commits(const std::filesystem::path& dir);

}  // namespace attnscan
