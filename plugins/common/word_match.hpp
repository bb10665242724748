#pragma once
// same_sentence_match / cross_sentence_match: T(i) = pieces of words matching i's word, in i's own
// sentence (including i itself) or in the other one.
#include "word_keys.hpp"

namespace attnscan_plugins {

class WordMatch : public attnscan::sdk::Detector {
 public:
  WordMatch(const attnscan::sdk::Params& p, bool same) : same_(same), stem_(parse_match(p)) {}
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const auto& e = batch[b];
      const auto keys = word_keys(e, stem_);
      std::vector<std::vector<std::size_t>> targets(e.size());
      for (std::size_t i = 0; i < e.size(); ++i) {
        if (!e.tokens[i].is_content()) continue;
        for (std::size_t j = 0; j < e.size(); ++j)
          if (e.tokens[j].is_content() && (e.tokens[j].sentence == e.tokens[i].sentence) == same_ && keys[j] == keys[i])
            targets[i].push_back(j);
      }
      out[b].scores.assign(static_cast<std::size_t>(e.layers * e.heads), 0.0f);
      out[b].baseline.assign(static_cast<std::size_t>(e.layers), 0.0f);
      attnscan::sdk::score_target_sets(e, targets, out[b].scores.data(), out[b].baseline.data());
    }
  }

 private:
  bool same_, stem_;
};

}  // namespace attnscan_plugins
