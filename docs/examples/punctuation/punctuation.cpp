// Example detector: how much attention goes to punctuation tokens (",", ".", "?", ...).
// Built out of tree against the installed SDK; see docs/writing-a-detector.md.
#include <cctype>

#include "attnscan/detector.hpp"

namespace {

class Punctuation : public attnscan::sdk::Detector {
 public:
  // Parameters arrive checked and typed; keep what score() needs as const members.
  explicit Punctuation(const attnscan::sdk::Params& p)
      : include_self_(attnscan::sdk::param<bool>(p, "include_self")) {}

  // Called concurrently on different batches: use only locals and const members here.
  void score(const std::vector<attnscan::sdk::Example>& batch,
             std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const auto& e = batch[b];
      std::vector<std::size_t> punct;  // the target set: every punctuation token
      for (std::size_t j = 0; j < e.size(); ++j) {
        const auto& t = e.tokens[j].text;
        if (e.tokens[j].is_content() && t.size() == 1 && std::ispunct(static_cast<unsigned char>(t[0]))) punct.push_back(j);
      }
      std::vector<std::vector<std::size_t>> targets(e.size());
      for (std::size_t i = 0; i < e.size(); ++i)
        for (std::size_t j : punct)
          if (include_self_ || j != i) targets[i].push_back(j);
      out[b].scores.assign(static_cast<std::size_t>(e.layers * e.heads), 0.0f);
      out[b].baseline.assign(static_cast<std::size_t>(e.layers), 0.0f);  // one per layer
      attnscan::sdk::score_target_sets(e, targets, out[b].scores.data(), out[b].baseline.data());
    }
  }

 private:
  bool include_self_;
};

attnscan::sdk::DetectorInfo info() {
  return {"punctuation",
          "1.0",
          "attention mass on punctuation tokens; NaN for examples without punctuation",
          {"punctuation"},
          {{"include_self", attnscan::sdk::ParamType::Bool, true, "count a punctuation token's attention to itself"}}};
}

}  // namespace

ATTNSCAN_DETECTOR(Punctuation, info)
