// cross_sentence_match: attention to pieces of identical (or same-stem) words in the other sentence.
#include "../common/word_match.hpp"

namespace {
struct CrossSentence : attnscan_plugins::WordMatch {
  explicit CrossSentence(const attnscan::sdk::Params& p) : WordMatch(p, false) {}
};
attnscan::sdk::DetectorInfo info() {
  return {"cross_sentence_match", "1.0",
          "attention mass on pieces of words in the other sentence matching the query's word; NaN without matches",
          {"cross_sentence_match"}, {attnscan_plugins::match_param()}};
}
}  // namespace
ATTNSCAN_DETECTOR(CrossSentence, info)
