#pragma once
// A finished attnscan output opened for the report and the plots: the checks that turn a wrong file
// into a clear message, the per-output aggregates, and the examples whose attention is stored.
#include <filesystem>
#include <string>
#include <vector>

#include "store/layout_file.hpp"
#include "store/output_file.hpp"
#include "store/score_stats.hpp"

namespace attnscan::analysis {

// One example with its tokens and its stored attention [stored layer][stored head][query][key].
struct ExampleView {
  std::size_t position = 0;      // row in examples/*
  std::size_t token_offset = 0;  // its first row in tokens/*
  std::string id, sentence_a, sentence_b, label;
  std::vector<std::string> tokens;
  std::vector<uint8_t> segment, special;
  std::vector<float> attention;  // empty when the file holds none for this example
};

class ResultFile {
 public:
  // Refuses files that are not attnscan outputs, of another format version, or without /scores.
  explicit ResultFile(const std::filesystem::path& path);
  const std::filesystem::path& path() const { return path_; }
  const LayoutReader& reader() const { return reader_; }
  const LayoutParams& params() const { return reader_.params(); }
  const RootInfo& root() const { return root_; }
  std::size_t examples() const { return reader_.examples(); }
  std::size_t layers_x_heads() const { return static_cast<std::size_t>(params().model_layers * params().model_heads); }

  // The detector output "detector/output" (or just "detector" when it has one output); the error
  // lists the outputs the file has.
  const ScoreOutput& output(const std::string& name) const;
  HeadStats stats(const ScoreOutput& so, const std::vector<uint8_t>* keep = nullptr) const;

  // 1 for the examples whose attention is stored.
  const std::vector<uint8_t>& has_attention() const { return has_attention_; }
  std::size_t examples_with_attention() const;
  // Index into the stored layer / head lists, or -1 when that layer or head was not stored.
  int stored_layer(int64_t layer) const;
  int stored_head(int64_t head) const;
  // Example position by its id (examples/id); the error says how to list ids.
  std::size_t find_example(const std::string& id) const;
  ExampleView example(std::size_t position) const;

 private:
  std::filesystem::path path_;
  LayoutReader reader_;
  RootInfo root_;
  std::vector<uint8_t> has_attention_;
};

struct ScoredExample {
  float score;
  std::size_t position;
};
// For each flat head index in `heads`, the `k` examples with the highest score of that head (among
// those with stored attention), highest first.
std::vector<std::vector<ScoredExample>> top_examples(const ResultFile& file, const ScoreOutput& so,
                                                   const std::vector<std::size_t>& heads, std::size_t k);

}  // namespace attnscan::analysis
