#pragma once
// Final output files: the root attributes that make them self-describing, and assembly of blocks
// (from block parts or shards) into one file in input order.
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "store/layout_file.hpp"

namespace attnscan {

struct RunIdentity {
  std::string config_identity, model_sha256, dataset_sha256;
  std::string detector_builds;  // one line per detector: "name version sha256-of-its-shared-library"
  // Empty when equal, else what differs, e.g. "the model (sha256 ab12... -> cd34...)".
  std::string difference(const RunIdentity& other) const;
};

struct RootInfo {
  RunIdentity identity;
  std::string config_yaml, model_dir, model_config_json, dataset;
  // The machine that finished the output (CPU, LibTorch, oneDNN, BLAS, bf16, HDF5), and one line per
  // distinct numerics (kernels, versions, threads) that computed any of its blocks.
  std::string compute_platform, numerics;
  // The tokenizer file and what it holds (Tokenizer::source()), and its subword kind (to_string(SubwordKind)).
  std::string tokenizer, subword_kind;
  uint64_t rows_read = 0, examples_written = 0, rows_skipped = 0, examples_truncated = 0, block_rows = 0;
  int64_t shard_index = 0, shard_count = 1;
};

void write_root(h5::File& file, const RootInfo& info);
RootInfo read_root(const h5::File& file);

// A range of one layout file: examples [a, b) and rejects [c, d).
struct BlockSource {
  std::filesystem::path file;
  std::size_t a = 0, b = 0, c = 0, d = 0;
};

// Writes OUT.rejects.tsv (index, file, line, reason) from the /rejects of `source`; returns its path.
std::filesystem::path write_rejects_tsv(const std::filesystem::path& source, const std::filesystem::path& out);

// OUT.tmp for the final metadata pass of a run whose attention was written raw at byte `at`. If an
// interrupted earlier pass left it unreadable, a fresh file is made and the attention moved over.
LayoutWriter reopen_or_rebuild(const std::filesystem::path& tmp, const LayoutParams& layout, uint64_t values,
                               uint64_t at, std::ostream& log);

// Copies the sources, in the given order, into `out`, in pieces of bounded size; without_attention: their
// attention's place only (a writer with_virtual_attention).
void copy_blocks(const std::vector<BlockSource>& sources, LayoutWriter& out, bool without_attention = false);

}  // namespace attnscan
