#pragma once
// Reading and writing the HDF5 layout (format_version kFormatVersion; every older one read): block parts,
// final outputs and shards share it.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "store/attention_checksums.hpp"
#include "store/h5_file.hpp"
#include "store/layer_maps.hpp"
#include "store/layout_columns.hpp"

namespace attnscan {

inline constexpr const char* kFormatName = "attnscan";
// 7: attention/values may be an HDF5 virtual dataset over shard files (merge --virtual): attention/source_*
// and /attention:source_files say where each piece is (store/attention_checksums.hpp); 6 and older: never.
// 6: every variable-length string column has NAME_crc32 beside it (h5::text_checksum_column; 5 and older:
// none, their text read unchecked).
// 5: scores/KEY/baseline [N, L], one baseline per layer (4 and older: [N], read as that value for every layer).
// 4: tokens/char_start, tokens/char_end (int64 code points into the sentence; 3 and older: read as -1).
// 3: examples/{n_tokens,tokens_a,tokens_b,token_offset} signed int64 (2 and 1: uint32/uint64; still read).
// 2: every chunked dataset under Fletcher32, attention/checksums (store/attention_checksums.hpp).
// 1: the same layout without checksums; still read.
inline constexpr int64_t kFormatVersion = 7;
inline constexpr int64_t kFirstCharOffsetsVersion = 4;  // tokens/char_start and tokens/char_end
// tokens/char_start or tokens/char_end: absent from files older than kFirstCharOffsetsVersion.
bool is_char_offset_column(std::string_view name);
inline constexpr int64_t kFirstChecksummedVersion = 2;
inline constexpr int64_t kFirstTextChecksumVersion = 6;
inline constexpr int64_t kOldestFormatVersion = 1;
// A score output's group and datasets: scores/KEY/values ([N, L, H]) and scores/KEY/baseline ([N, L]).
inline std::string score_group(const std::string& key) { return "scores/" + key; }
inline std::string score_values(const std::string& key) { return score_group(key) + "/values"; }
inline std::string score_baseline(const std::string& key) { return score_group(key) + "/baseline"; }
// Rows [begin, end) of scores/KEY/baseline as [rows][layers]; a file before version 5 holds one value per
// row, given to every layer.
std::vector<float> read_baseline_rows(const h5::File& f, const std::string& key, std::size_t begin, std::size_t end,
                                      std::size_t layers);
// Optional datasets (output.value_norms and the layer maps below); files without them read as before.
inline constexpr const char* kValueNorms = "tokens/value_norm";
// Optional gold trees per token (datasets with dependency trees, dataset.format conllu).
inline constexpr const char* kDepHead = "tokens/dep_head";
inline constexpr const char* kDepRelation = "tokens/dep_relation";

// One detector output stored under /scores/<detector>/<output>/.
struct ScoreOutput {
  std::string detector, output, version, description, parameters;
  std::string plugin;  // the plugin's own name when `detector` is an alias (`as:`), else empty
  std::string map = "weights";  // what the detector scored (`map:`)
  std::string key() const { return detector + "/" + output; }
};

struct LayoutParams {
  AttentionDType dtype = AttentionDType::F16;
  Compression compression = Compression::None;
  std::vector<int64_t> layers, heads;  // stored subsets (0-indexed)
  int64_t model_layers = 0, model_heads = 0;
  std::vector<ScoreOutput> scores;
  bool value_norms = false;  // tokens/value_norm (output.value_norms)
  std::vector<std::string> layer_maps;  // the kLayerMaps stored, by name, in table order
  bool stores(std::string_view layer_map) const;
  bool trees = false;        // tokens/dep_head and tokens/dep_relation (annotated datasets)
  // Per stored layer, (before, after): a query i sees keys i - before .. i + after (-1: unbounded), the
  // attention outside is a structural 0 (decoders' causal layers: (-1, 0)). Empty: every key, as files
  // written before it was recorded.
  std::vector<int64_t> key_ranges;
};

const char* dtype_name(AttentionDType t);
const char* compression_name(Compression c);

class LayoutWriter {
 public:
  // attention_values: the exact total when known (>= 0): uncompressed attention is then one
  // contiguous dataset, written without chunk bookkeeping. With `external_attention` the dataset is
  // allocated at once and filled by the caller with raw writes at attention_file_offset(); appended
  // chunks then carry metadata only, with absolute attention offsets.
  LayoutWriter(const std::filesystem::path& path, const LayoutParams& params, int64_t attention_values = -1,
               bool external_attention = false);
  // A block part that will hold `block` (and `attention_values` appended values): each dataset chunked
  // to fit its rows, so a small block costs about what it holds on disk.
  static LayoutWriter for_block(const std::filesystem::path& path, const LayoutParams& params, const LayoutChunk& block,
                                uint64_t attention_values);
  // Reopens such a file to append its metadata; metadata already there (every column, every score
  // row, the attention checksums) is discarded first.
  static LayoutWriter reopen(const std::filesystem::path& path, const LayoutParams& params);
  // A file whose attention/values is virtual (merge --virtual): appended chunks carry attention_elsewhere,
  // and finish_virtual_attention() maps the values there (kAttentionSources).
  static LayoutWriter with_virtual_attention(const std::filesystem::path& path, const LayoutParams& params);
  void finish_virtual_attention();
  uint64_t attention_file_offset() const { return file_.dataset_offset("attention/values"); }
  // Appends a chunk whose offsets are relative to its own first token / attention value.
  void append(const LayoutChunk& chunk);
  // Appends attention values (storage dtype bytes) after those appended so far: the values of the
  // chunk appended last, when they come in pieces rather than in its `attention`.
  void append_attention(const uint8_t* bytes, uint64_t values);
  // The checksums of the attention bytes appended so far (for write_attention_checksums), unless
  // skip_attention_checksums() was called (a file that never gets attention/checksums: a block part).
  const SpanChecksums& appended_attention() const { return appended_attention_; }
  void skip_attention_checksums() { checksum_appends_ = false; }
  h5::File& file() { return file_; }

 private:
  LayoutWriter(h5::File file, const LayoutParams& params) : file_(std::move(file)), params_(params) {}
  void create_datasets(int64_t attention_values, bool external_attention, const LayoutChunk* fit_to, uint64_t fit_attention);
  void describe_attention();  // the attributes of /attention and attention/values
  h5::File file_;
  LayoutParams params_;
  uint64_t tokens_ = 0, attention_ = 0;
  bool virtual_attention_ = false;
  std::vector<LayoutChunk::AttentionElsewhere> pieces_;  // virtual attention, in value order
  SpanChecksums appended_attention_;
  bool checksum_appends_ = true;
};

// Parts whose attention lives in the final file carry this root attribute (= 1).
inline constexpr const char* kExternalAttentionAttr = "attention_external";

class LayoutReader {
 public:
  explicit LayoutReader(const std::filesystem::path& path);
  const h5::File& file() const { return file_; }
  const LayoutParams& params() const { return params_; }
  int64_t format_version() const { return format_version_; }
  // A block part whose attention lives in the final file (kExternalAttentionAttr).
  bool external_attention() const { return external_; }
  // Attention values [begin, end): raw (in the file's dtype), or as float32 (uint8 as 0..255),
  // verified against attention/checksums when the file has them.
  void attention_raw(uint64_t begin, uint64_t end, void* out) const;
  std::vector<float> attention_floats(uint64_t begin, uint64_t end) const;
  std::size_t examples() const { return n_examples_; }
  std::size_t rejects() const { return n_rejects_; }
  // Examples [a, b) and rejects [c, d), offsets made relative to the chunk; without_attention: the
  // attention's place instead of its bytes (attention_elsewhere).
  LayoutChunk read(std::size_t a, std::size_t b, std::size_t c, std::size_t d, bool without_attention = false) const;
  // Attention values of one stored example (n x n per stored layer and head).
  uint64_t attention_count(int64_t n_tokens) const;
  // Where example i's map starts in each kLayerMaps dataset (files that store one).
  uint64_t layer_map_start(std::size_t example) const;

 private:
  h5::File file_;
  LayoutParams params_;
  std::size_t n_examples_ = 0, n_rejects_ = 0;
  mutable std::vector<uint64_t> layer_map_starts_;  // [examples + 1], filled on first use
  int64_t format_version_ = 0;
  bool external_ = false;
  std::unique_ptr<AttentionChecks> checks_;
};

}  // namespace attnscan
