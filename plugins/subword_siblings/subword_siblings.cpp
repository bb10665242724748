// subword_siblings: attention from a subword piece to the other pieces of its word (straw <-> ##berries).
#include <map>
#include <utility>

#include "attnscan/detector.hpp"

namespace {

class SubwordSiblings : public attnscan::sdk::Detector {
 public:
  explicit SubwordSiblings(const attnscan::sdk::Params&) {}
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const auto& e = batch[b];
      std::map<std::pair<int, int>, std::vector<std::size_t>> words;  // (sentence, word) -> pieces
      for (std::size_t i = 0; i < e.size(); ++i)
        if (e.tokens[i].is_content()) words[{e.tokens[i].sentence, e.tokens[i].word_index}].push_back(i);
      std::vector<std::vector<std::size_t>> targets(e.size());
      for (const auto& [key, pieces] : words)
        for (std::size_t i : pieces)
          for (std::size_t j : pieces)
            if (j != i) targets[i].push_back(j);
      out[b].scores.assign(static_cast<std::size_t>(e.layers * e.heads), 0.0f);
      out[b].baseline.assign(static_cast<std::size_t>(e.layers), 0.0f);
      attnscan::sdk::score_target_sets(e, targets, out[b].scores.data(), out[b].baseline.data());
    }
  }
};

attnscan::sdk::DetectorInfo info() {
  return {"subword_siblings", "1.0",
          "attention mass on the other WordPieces of the query's word; NaN without split words",
          {"subword_siblings"}, {}};
}

}  // namespace
ATTNSCAN_DETECTOR(SubwordSiblings, info)
