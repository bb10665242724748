// delimiter: attention mass on the template's leading special ([CLS], <s>), on its separators ([SEP],
// </s>), and on either; found by role, so it means the same on every model family.
#include "attnscan/detector.hpp"

namespace {

using attnscan::sdk::TokenRole;

class Delimiter : public attnscan::sdk::Detector {
 public:
  explicit Delimiter(const attnscan::sdk::Params&) {}
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const auto& e = batch[b];
      std::vector<std::size_t> begin, sep, both;
      for (std::size_t j = 0; j < e.size(); ++j) {
        const TokenRole role = e.tokens[j].role;
        if (role == TokenRole::Begin) begin.push_back(j);
        if (role == TokenRole::Separator) sep.push_back(j);
        if (role == TokenRole::Begin || role == TokenRole::Separator) both.push_back(j);
      }
      const std::size_t lh = static_cast<std::size_t>(e.layers * e.heads);
      out[b].scores.assign(3 * lh, 0.0f);
      const std::size_t layers = static_cast<std::size_t>(e.layers);
      out[b].baseline.assign(3 * layers, 0.0f);
      const std::vector<std::size_t>* sets[] = {&begin, &sep, &both};
      for (std::size_t o = 0; o < 3; ++o) {
        std::vector<std::vector<std::size_t>> targets(e.size(), *sets[o]);
        attnscan::sdk::score_target_sets(e, targets, out[b].scores.data() + o * lh, out[b].baseline.data() + o * layers);
      }
    }
  }
};

// Output names keep BERT's words so that results stay comparable with earlier runs.
attnscan::sdk::DetectorInfo info() {
  return {"delimiter", "1.1",
          "attention mass on the template's leading special, [CLS] or <s> (cls), on its separators, [SEP] or </s> "
          "(sep), and on either (cls_or_sep)",
          {"cls", "sep", "cls_or_sep"}, {}};
}

}  // namespace
ATTNSCAN_DETECTOR(Delimiter, info)
