#pragma once
// Streaming readers of sentence-pair and single-sentence datasets: delimited text (TSV/CSV), JSON
// lines, line-aligned parallel files and CoNLL-U dependency treebanks. Records are read one at a
// time; nothing holds the whole file.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace attnscan {

// A row that cannot be used: "file:line: reason".
class DatasetError : public Error {
 public:
  using Error::Error;
};

// A bad row under dataset.on_bad_row: error. `skippable`: that setting's `skip` would have passed it over
// (a label that is no class of the model's head is found later, and no setting skips it).
class BadRowError : public DatasetError {
 public:
  BadRowError(const std::string& what, bool skippable) : DatasetError(what), skippable(skippable) {}
  bool skippable;
};

enum class DatasetFormat { Delimited, Jsonl, Parallel, Conllu };
enum class Quoting { None, Rfc4180 };
enum class BadRowPolicy { Error, Skip };
enum class LabelType { String, Number };
// CoNLL-U: each sentence is an example, or sentences 1+2, 3+4, ... form pairs (see docs/datasets.md).
enum class ConlluPairing { Single, Consecutive };

// A column chosen by header name or by 0-based index; unset when both are empty.
struct ColumnRef {
  std::string name;
  int index = -1;
  bool set() const { return !name.empty() || index >= 0; }
  std::string describe() const { return name.empty() ? "column " + std::to_string(index) : "'" + name + "'"; }
};

struct DatasetSpec {
  DatasetFormat format = DatasetFormat::Delimited;
  std::filesystem::path path;  // delimited and jsonl
  // delimited
  char delimiter = '\t';
  Quoting quoting = Quoting::None;
  bool header = true;
  // delimited: columns; jsonl: field names (ColumnRef::name)
  // sentence_b unset (empty name, no index): a single-sentence dataset.
  ColumnRef sentence_a, sentence_b, id, label;
  // parallel
  std::filesystem::path s1, s2, labels;
  LabelType label_type = LabelType::String;
  ConlluPairing pairing = ConlluPairing::Single;  // conllu
  BadRowPolicy on_bad_row = BadRowPolicy::Error;
};

// One word of a dependency-annotated sentence (CoNLL-U), in sentence order.
struct TreeWord {
  std::string form;      // FORM
  int32_t head = -1;     // 0-based index of the head word; -1 for the root
  std::string relation;  // DEPREL as written
};

struct PairRecord {
  uint64_t source_row = 0;  // 1-based line where the record starts
  std::string id;           // from the id column, else the source row
  std::string a, b;
  bool has_b = true;        // false: a single sentence (b is empty)
  // Dependency trees of A and B, one entry per word (empty for datasets without annotations); the
  // sentences are then tokenized word by word, so token word indices are the tree's word indices.
  std::vector<TreeWord> tree_a, tree_b;
  std::optional<std::string> label;  // as written
  std::optional<double> label_value; // for LabelType::Number
};

struct RejectedRow {
  std::filesystem::path file;
  uint64_t line = 0;
  std::string reason;
  std::string message() const { return file.string() + ":" + std::to_string(line) + ": " + reason; }
};

class PairReader {
 public:
  virtual ~PairReader() = default;
  // The next usable record, or nullopt at the end. A bad row throws DatasetError, or with
  // BadRowPolicy::Skip is passed to the reject callback and counted.
  virtual std::optional<PairRecord> next() = 0;
  uint64_t rows_read() const { return read_; }
  uint64_t rows_skipped() const { return skipped_; }
  void on_reject(std::function<void(const RejectedRow&)> f) { reject_ = std::move(f); }
  // Share of the input consumed so far, in [0, 1] (by bytes), for progress estimates.
  virtual double fraction() const = 0;

 protected:
  // Applies the bad-row policy: throws, or counts and reports. Returns false (row not usable).
  bool reject(const std::filesystem::path& file, uint64_t line, const std::string& reason);
  // Validates sentences and label and fills `rec`; false when the row was rejected.
  bool finish(const DatasetSpec& spec, const std::filesystem::path& file, PairRecord& rec);
  uint64_t read_ = 0, skipped_ = 0;
  std::function<void(const RejectedRow&)> reject_;
  BadRowPolicy policy_ = BadRowPolicy::Error;
};

// Opens the dataset and checks its header and columns (errors name file, line and field).
std::unique_ptr<PairReader> open_dataset(const DatasetSpec& spec);

}  // namespace attnscan
