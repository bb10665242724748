#pragma once
// In-memory columns of HDF5 layout v1 (see docs/hdf5-layout.md): the unit that is written to and
// read from block parts, final files and shards. Offsets are relative to the first row held.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnscan/storage_options.hpp"

namespace attnscan {


struct ExampleColumns {
  std::vector<uint64_t> index;          // row ordinal in the dataset (0-based, counts bad rows too)
  std::vector<uint64_t> row;            // 1-based source line
  std::vector<std::string> id, sentence_a, sentence_b, label;
  std::vector<uint8_t> has_label;
  std::vector<double> label_value;      // NaN when absent or not numeric
  std::vector<uint32_t> n_tokens, tokens_a, tokens_b;
  std::vector<uint8_t> truncated;
  std::vector<uint64_t> token_offset;   // into the token columns
  std::vector<int64_t> attention_offset;  // into attention values; -1 when not stored
  std::size_t size() const { return index.size(); }
};

struct TokenColumns {
  std::vector<int32_t> id, word_index;
  std::vector<std::string> text, word;  // WordPiece, and the whole word it belongs to
  std::vector<uint8_t> segment, special;
  std::size_t size() const { return id.size(); }
};

struct RejectColumns {
  std::vector<uint64_t> index, line;
  std::vector<std::string> file, reason;
  std::size_t size() const { return index.size(); }
};

// Per-example scores of one detector output: values [rows][layers][heads], baseline [rows].
struct ScoreColumns {
  std::vector<float> values, baseline;
};

struct LayoutChunk {
  ExampleColumns examples;
  TokenColumns tokens;
  std::vector<uint8_t> attention;  // raw values in the file's attention dtype
  RejectColumns rejects;
  std::map<std::string, ScoreColumns> scores;  // key "detector/output"
};

std::size_t attention_value_size(AttentionDType t);

}  // namespace attnscan
