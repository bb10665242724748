#pragma once
// A minimal detector for the fault plugins: one output, every score 0.5.
#include "attnscan/detector.hpp"

class Constant : public attnscan::sdk::Detector {
 public:
  explicit Constant(const attnscan::sdk::Params&) {}
  void score(const std::vector<attnscan::sdk::Example>& batch, std::vector<attnscan::sdk::ExampleScores>& out) const override {
    for (std::size_t b = 0; b < batch.size(); ++b) {
      out[b].scores.assign(static_cast<std::size_t>(batch[b].layers * batch[b].heads), 0.5f);
      out[b].baseline.assign(static_cast<std::size_t>(batch[b].layers), 0.5f);
    }
  }
};
