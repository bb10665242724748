#pragma once
// Checksums of the stored attention values (format_version 2): one CRC-32C per span of
// kChecksumSpan values of attention/values, in attention/checksums. Every other dataset of a layout
// file is chunked with HDF5's Fletcher32 filter, which HDF5 verifies on each read; uncompressed
// attention is one contiguous dataset (written raw, without HDF5 filters), so it carries these.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/h5_file.hpp"

namespace attnscan {

inline constexpr const char* kAttentionChecksums = "attention/checksums";
inline constexpr uint64_t kChecksumSpan = 1u << 16;  // values per checksum (128 KiB in float16)
// A virtual attention/values (merge --virtual, format_version 7): the pieces it maps, one row each, and
// the root attribute /attention:source_files (paths relative to the file's folder).
inline constexpr const char* kAttentionSourceBegin = "attention/source_begin";
inline constexpr const char* kAttentionSourceCount = "attention/source_count";
inline constexpr const char* kAttentionSourceFile = "attention/source_file";
inline constexpr const char* kAttentionSourceOffset = "attention/source_offset";

// The checksums of attention spans, assembled from the bytes where they pass anyway (a run's blocks as
// their commit reads them back, a writer's appends), in any order, so that finishing a file needs no
// pass of its own over its attention. Pieces cut at span boundaries; adding the same values again
// (a block redone) replaces what they gave.
class SpanChecksums {
 public:
  struct Cut {  // values [first, first + count), within one span
    uint64_t first, count;
    uint32_t crc;
  };
  // The CRC-32C of values [first, first + count) (value_size bytes each) in pieces cut at span
  // boundaries; touches no SpanChecksums, so threads can cut at once and put in turn.
  static std::vector<Cut> cut(uint64_t first, const void* bytes, uint64_t count, std::size_t value_size);
  void put(const std::vector<Cut>& cuts);
  // cut and put; returns the values' CRC-32C.
  uint32_t add(uint64_t first, const void* bytes, uint64_t count, std::size_t value_size);
  // The checksum of span `span` of a dataset of `values` values, when what was added covers it exactly.
  bool span(uint64_t span, uint64_t values, std::size_t value_size, uint32_t& crc) const;
  // The CRC-32C of values [first, first + count), when what was added tiles them exactly.
  bool range(uint64_t first, uint64_t count, std::size_t value_size, uint32_t& crc) const;

 private:
  struct Piece {
    uint64_t count;
    uint32_t crc;
  };
  std::vector<uint32_t> whole_;       // by span, where have_whole_
  std::vector<bool> have_whole_;
  std::map<uint64_t, Piece> pieces_;  // parts of spans, by first value
};

// (Re)computes attention/checksums of the attention values as they are in the file now; the spans
// `known` covers are taken from it, the others read.
void write_attention_checksums(h5::File& f, const SpanChecksums& known = {});

// Reads attention values verified against their checksums. Without checksums (a file of
// format_version 1) the values are read as they are. A virtual attention/values is read from its source
// files, each piece verified against the checksums of its source.
class AttentionChecks {
 public:
  explicit AttentionChecks(const h5::File& f);
  ~AttentionChecks();
  // The source files of a virtual attention/values (empty otherwise), as found from this file.
  std::vector<std::string> source_files() const;
  // Why values [a, b) (a range bad_spans() gave) are bad: " (checksum mismatch)", and for a virtual
  // attention/values also where they are: " = SHARD values x..y (checksum mismatch)" or "... (SHARD is missing)".
  std::string why_bad(uint64_t a, uint64_t b) const;
  bool present() const { return present_; }
  uint64_t values() const { return values_; }
  std::size_t value_size() const { return value_size_; }
  // Raw values [begin, end) into out (value_size() bytes each). Throws "FILE is damaged: dataset
  // attention/values, values A..B (checksum mismatch)" when a span covering them does not match.
  void read(const h5::File& f, uint64_t begin, uint64_t end, void* out) const;
  // Every span checked: the value ranges [a, b) whose checksum does not match (or that cannot be read).
  std::vector<std::pair<uint64_t, uint64_t>> bad_spans(const h5::File& f) const;

 private:
  struct Piece {
    uint64_t begin, count, file, source_begin;
  };
  struct Source;
  bool span_ok(std::size_t span, const uint8_t* bytes, uint64_t count) const;
  const Source& source(std::size_t file) const;  // opened on first use
  void read_virtual(uint64_t begin, uint64_t end, void* out) const;
  std::vector<std::pair<uint64_t, uint64_t>> bad_virtual_spans() const;
  bool virtual_ = false;
  std::vector<Piece> pieces_;  // virtual attention, by begin
  std::vector<std::string> files_;
  std::vector<std::string> identities_;  // per file, as the merge recorded them (store/source_identity.hpp)
  std::filesystem::path merged_;         // the file that maps them (source_files are relative to its folder)
  mutable std::vector<std::unique_ptr<Source>> sources_;
  mutable std::mutex sources_mutex_;
  bool present_ = false;
  uint64_t values_ = 0, span_ = kChecksumSpan;
  std::size_t value_size_ = 1;
  std::vector<uint32_t> crc_;
  // The spans read last: consecutive examples usually share one.
  mutable std::mutex cache_mutex_;
  mutable std::vector<uint8_t> cache_;
  mutable uint64_t cache_begin_ = 0, cache_end_ = 0;
};

}  // namespace attnscan
