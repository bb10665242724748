#pragma once
// next_token / prev_token: T(i) = {i + step}.
#include "attnscan/detector.hpp"

namespace attnscan_plugins {

class Adjacent : public attnscan::sdk::Detector {
 public:
  Adjacent(const attnscan::sdk::Params& p, int step)
      : step_(step), within_(attnscan::sdk::param<bool>(p, "within_sentence")) {}
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const auto& e = batch[b];
      const auto n = static_cast<long>(e.size());
      std::vector<std::vector<std::size_t>> targets(e.size());
      for (long i = 0; i < n; ++i) {
        long j = i + step_;
        if (j < 0 || j >= n) continue;
        const auto &a = e.tokens[static_cast<std::size_t>(i)], &c = e.tokens[static_cast<std::size_t>(j)];
        if (within_ && (!a.is_content() || !c.is_content() || a.sentence != c.sentence)) continue;
        targets[static_cast<std::size_t>(i)].push_back(static_cast<std::size_t>(j));
      }
      out[b].scores.assign(static_cast<std::size_t>(e.layers * e.heads), 0.0f);
      out[b].baseline.assign(static_cast<std::size_t>(e.layers), 0.0f);
      attnscan::sdk::score_target_sets(e, targets, out[b].scores.data(), out[b].baseline.data());
    }
  }

 private:
  int step_;
  bool within_;
};

inline attnscan::sdk::ParamSpec within_sentence_param() {
  return {"within_sentence", attnscan::sdk::ParamType::Bool, false,
          "only pairs of content tokens (no template or in-text specials) in the same sentence (default: all tokens, as Clark et al.)"};
}

}  // namespace attnscan_plugins
