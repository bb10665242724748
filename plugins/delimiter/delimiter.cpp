// delimiter: attention mass on [CLS], on [SEP] tokens, and on either.
#include "attnscan/detector.hpp"

namespace {

class Delimiter : public attnscan::sdk::Detector {
 public:
  explicit Delimiter(const attnscan::sdk::Params&) {}
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const auto& e = batch[b];
      std::vector<std::size_t> cls, sep, both;
      for (std::size_t j = 0; j < e.size(); ++j) {
        if (!e.tokens[j].special) continue;
        if (e.tokens[j].text == "[CLS]") cls.push_back(j);
        if (e.tokens[j].text == "[SEP]") sep.push_back(j);
        if (e.tokens[j].text == "[CLS]" || e.tokens[j].text == "[SEP]") both.push_back(j);
      }
      const std::size_t lh = static_cast<std::size_t>(e.layers * e.heads);
      out[b].scores.assign(3 * lh, 0.0f);
      out[b].baseline.clear();
      const std::vector<std::size_t>* sets[] = {&cls, &sep, &both};
      for (std::size_t o = 0; o < 3; ++o) {
        std::vector<std::vector<std::size_t>> targets(e.size(), *sets[o]);
        out[b].baseline.push_back(attnscan::sdk::score_target_sets(e, targets, out[b].scores.data() + o * lh));
      }
    }
  }
};

attnscan::sdk::DetectorInfo info() {
  return {"delimiter", "1.0", "attention mass on [CLS] (cls), on [SEP] tokens (sep) and on either (cls_or_sep)",
          {"cls", "sep", "cls_or_sep"}, {}};
}

}  // namespace
ATTNSCAN_DETECTOR(Delimiter, info)
