// dependency: Clark et al. (2019) syntax heads. For each relation and direction, the share of that
// relation's words for which a head's most-attended word is the gold one, on word-level attention
// (docs/patterns.md#dependency). Needs a dataset with dependency trees (dataset.format conllu).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnscan/detector.hpp"
#include "relations.hpp"
#include "word_attention.hpp"

namespace {

using attnscan::sdk::Example;
using attnscan::sdk::ExampleScores;

// A word whose relation is scored: both it and its gold head have tokens (not cut by truncation).
struct Arc {
  std::size_t dependent, head;  // indices into WordAttention's words
  std::size_t relation;         // index into kRelations
};

class Dependency : public attnscan::sdk::Detector {
 public:
  explicit Dependency(const attnscan::sdk::Params&) {}

  void score(const std::vector<Example>& batch, std::vector<ExampleScores>& out) const override {
    const std::size_t relations = attnscan::dependency::kRelations.size();
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const Example& e = batch[b];
      const std::size_t lh = static_cast<std::size_t>(e.layers * e.heads);
      out[b].scores.assign(2 * relations * lh, attnscan::sdk::kUndefined);
      const std::size_t layers = static_cast<std::size_t>(e.layers);
      out[b].baseline.assign(2 * relations * layers, 0.0f);  // [output][layer]: the output's word count
      if (e.word_annotations.empty()) continue;  // no trees: every score undefined, no words counted
      const attnscan::dependency::WordAttention words(e);
      std::vector<Arc> arcs;
      std::vector<std::size_t> count(relations);
      for (std::size_t w = 0; w < words.size(); ++w) {
        const auto& word = words.word(w);
        const auto& sentence = e.word_annotations.at(word.sentence);
        if (static_cast<std::size_t>(word.index) >= sentence.size())
          throw std::runtime_error("example " + e.id + ": word " + std::to_string(word.index) + " of sentence " +
                                   std::to_string(word.sentence) + " has no annotation");
        const auto& a = sentence[static_cast<std::size_t>(word.index)];
        const int r = attnscan::dependency::relation_index(a.relation);
        if (r < 0 || a.head < 0) continue;
        const long head = words.find(word.sentence, a.head);
        if (head < 0) continue;  // the head word was cut off by truncation
        arcs.push_back({w, static_cast<std::size_t>(head), static_cast<std::size_t>(r)});
        ++count[static_cast<std::size_t>(r)];
      }
      for (std::size_t r = 0; r < relations; ++r)
        std::fill_n(out[b].baseline.begin() + static_cast<std::ptrdiff_t>(2 * r * layers), 2 * layers,
                    static_cast<float>(count[r]));
      std::vector<double> correct(2 * relations);
      std::vector<double> matrix;
      for (int64_t l = 0; l < e.layers; ++l)
        for (int64_t h = 0; h < e.heads; ++h) {
          words.compute(e.head(l, h), matrix);
          std::fill(correct.begin(), correct.end(), 0.0);
          for (const Arc& arc : arcs) {
            if (words.most_attended_by(matrix, arc.dependent) == arc.head) correct[2 * arc.relation] += 1;
            if (words.most_attending_to(matrix, arc.dependent) == arc.head) correct[2 * arc.relation + 1] += 1;
          }
          const std::size_t k = static_cast<std::size_t>(l * e.heads + h);
          for (std::size_t r = 0; r < relations; ++r)
            if (count[r] > 0)
              for (std::size_t d = 0; d < 2; ++d)
                out[b].scores[(2 * r + d) * lh + k] = static_cast<float>(correct[2 * r + d] / static_cast<double>(count[r]));
        }
    }
  }
};

attnscan::sdk::DetectorInfo info() {
  std::vector<std::string> outputs;
  for (const char* r : attnscan::dependency::kRelations) {
    outputs.push_back(std::string(r) + ".dep_to_head");
    outputs.push_back(std::string(r) + ".head_to_dep");
  }
  return {"dependency", "1.0",
          "share of a relation's words whose most-attended word is the gold head (dep_to_head) or which their gold "
          "head attends to most (head_to_dep), Clark et al. 2019; baseline column: the number of such words (the "
          "weight of the example); NaN without trees or without the relation",
          outputs, {}};
}

}  // namespace
ATTNSCAN_DETECTOR(Dependency, info)
