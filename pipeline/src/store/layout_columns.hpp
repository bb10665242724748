#pragma once
// In-memory columns of the HDF5 layout (see docs/hdf5-layout.md): the unit that is written to and
// read from block parts, final files and shards. Offsets are relative to the first row held.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/storage_options.hpp"

namespace attnscan {

struct ExampleColumns {
  std::vector<uint64_t> index;          // row ordinal in the dataset (0-based, counts bad rows too)
  std::vector<uint64_t> row;            // 1-based source line
  std::vector<std::string> id, sentence_a, sentence_b, label;
  std::vector<uint8_t> has_label;
  std::vector<double> label_value;      // NaN when absent or not numeric
  // Counts and offsets are signed 64-bit (format_version 3; 1 and 2 stored uint32/uint64, read the same).
  std::vector<int64_t> n_tokens, tokens_a, tokens_b;
  std::vector<uint8_t> truncated;
  std::vector<int64_t> token_offset;    // into the token columns
  std::vector<int64_t> attention_offset;  // into attention values; -1 when not stored
  std::size_t size() const { return index.size(); }
};

struct TokenColumns {
  std::vector<int32_t> id, word_index;
  std::vector<std::string> text, word;  // WordPiece, and the whole word it belongs to
  std::vector<uint8_t> segment, special;
  // Code points [char_start, char_end) of the token in its sentence (examples/sentence_a or _b, per
  // segment); -1/-1 for template specials and sentences not aligned (format_version 4; older files:
  // read as -1).
  std::vector<int64_t> char_start, char_end;
  std::size_t size() const { return id.size(); }
};

struct RejectColumns {
  std::vector<uint64_t> index, line;
  std::vector<std::string> file, reason;
  std::size_t size() const { return index.size(); }
};

// Per-example scores of one detector output: values [rows][layers][heads], baseline [rows][layers].
struct ScoreColumns {
  std::vector<float> values, baseline;
};

struct LayoutChunk {
  ExampleColumns examples;
  TokenColumns tokens;
  std::vector<uint8_t> attention;  // raw values in the file's attention dtype
  // Read without its attention bytes (merge --virtual): they are `count` values from `begin` of the
  // attention of file `file` instead.
  struct AttentionElsewhere {
    std::string file;
    uint64_t begin = 0, count = 0;
  } attention_elsewhere;
  std::vector<float> value_norms;  // [tokens][model layers][model heads] when stored, else empty
  // Per stored layer map (kLayerMaps, by name): each example's [model layers][n][n], in example order.
  std::map<std::string, std::vector<float>> layer_maps;
  // Gold dependency trees, one entry per token (annotated datasets; else empty): the word_index of the
  // head of the token's word within its sentence (-1 root, -2 template specials) and its relation.
  std::vector<int32_t> dep_head;
  std::vector<std::string> dep_relation;
  RejectColumns rejects;
  std::map<std::string, ScoreColumns> scores;  // key "detector/output"
};

std::size_t attention_value_size(AttentionDType t);

// Chunk sizes: per-example columns in thousands, tokens in tens of thousands.
inline constexpr std::size_t kExampleChunk = 4096, kTokenChunk = 65536, kRejectChunk = 1024;

// Every per-example, per-token and per-reject column of the layout, in file order: the one list that
// creating, appending, reading and truncating a layout file go through. `visit(name, column, chunk)`
// is called with each dataset path, the member holding it and its chunk size.
template <typename Chunk, typename Visit>
void for_each_column(Chunk& c, Visit&& visit) {
  auto& e = c.examples;
  auto& t = c.tokens;
  auto& r = c.rejects;
  visit("examples/index", e.index, kExampleChunk);
  visit("examples/row", e.row, kExampleChunk);
  visit("examples/token_offset", e.token_offset, kExampleChunk);
  visit("examples/id", e.id, kExampleChunk);
  visit("examples/sentence_a", e.sentence_a, kExampleChunk);
  visit("examples/sentence_b", e.sentence_b, kExampleChunk);
  visit("examples/label", e.label, kExampleChunk);
  visit("examples/has_label", e.has_label, kExampleChunk);
  visit("examples/label_value", e.label_value, kExampleChunk);
  visit("examples/n_tokens", e.n_tokens, kExampleChunk);
  visit("examples/tokens_a", e.tokens_a, kExampleChunk);
  visit("examples/tokens_b", e.tokens_b, kExampleChunk);
  visit("examples/truncated", e.truncated, kExampleChunk);
  visit("examples/attention_offset", e.attention_offset, kExampleChunk);
  visit("tokens/id", t.id, kTokenChunk);
  visit("tokens/text", t.text, kTokenChunk);
  visit("tokens/word", t.word, kTokenChunk);
  visit("tokens/segment", t.segment, kTokenChunk);
  visit("tokens/word_index", t.word_index, kTokenChunk);
  visit("tokens/special", t.special, kTokenChunk);
  visit("tokens/char_start", t.char_start, kTokenChunk);
  visit("tokens/char_end", t.char_end, kTokenChunk);
  visit("rejects/index", r.index, kRejectChunk);
  visit("rejects/line", r.line, kRejectChunk);
  visit("rejects/file", r.file, kRejectChunk);
  visit("rejects/reason", r.reason, kRejectChunk);
}

}  // namespace attnscan
