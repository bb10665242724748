#pragma once
// A complete check of one layout file (a final output, a shard or a committed block part): every
// dataset read through its checksums, the attention checksums, the offsets between examples, tokens
// and attention, attention rows summing to 1, and scores finite or NaN. Used by `attnscan verify`
// and, for block parts, by a resume before it keeps a committed block.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnscan {

struct CheckOptions {
  bool row_sums = true;  // attention rows sum to 1 within the dtype's tolerance
};

struct CheckReport {
  std::vector<std::string> problems;  // empty: nothing wrong found
  int64_t format_version = 0;
  bool checksums = false;             // the file carries checksums (format_version >= 2)
  bool text_checksums = false;        // and checksums of its text columns (format_version >= 6)
  std::size_t examples = 0, rejects = 0, stored_examples = 0, rows_checked = 0;
  uint64_t attention_values = 0, checksum_spans = 0;
  std::vector<std::string> attention_sources;  // a virtual attention/values: the shard files checked behind it
  bool ok() const { return problems.empty(); }
};

CheckReport check_layout_file(const std::filesystem::path& path, const CheckOptions& options = {});

// The range an attention row of n values stored in a dtype may sum to: the rounding of n float32,
// float16 or uint8 values (it widens with n).
struct RowSumRange {
  double low, high;
};
RowSumRange row_sum_range(const std::string& dtype, uint64_t n);

}  // namespace attnscan
