// same_sentence_match: attention to pieces of identical (or same-stem) words in the same sentence.
#include "../common/word_match.hpp"

namespace {
struct SameSentence : attnscan_plugins::WordMatch {
  explicit SameSentence(const attnscan::sdk::Params& p) : WordMatch(p, true) {}
};
attnscan::sdk::DetectorInfo info() {
  return {"same_sentence_match", "1.0",
          "attention mass on pieces of words in the same sentence matching the query's word (itself included)",
          {"same_sentence_match"}, {attnscan_plugins::match_param()}};
}
}  // namespace
ATTNSCAN_DETECTOR(SameSentence, info)
