#pragma once
// Clark et al. (2019)'s syntax heads of a result file: per dependency relation and direction, the head
// whose most-attended word is most often the gold one (corpus accuracy over the relation's words), beside
// the best fixed-offset baseline stored with the scores (store/offset_baselines.hpp). `attnscan heads
// --relations` prints them; the report shows them with examples.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/result_file.hpp"

namespace attnscan::analysis {

struct RelationHead {
  std::string detector, relation, direction;  // the output "<relation>.<direction>" of `detector`
  int64_t words = 0, layer = 0, head = 0, best_offset = 0, offset_correct = 0;
  double accuracy = 0, baseline = 0;  // correct / words of the head and of the offset baseline
  // Examples with stored attention of this head where it finds the most gold words of the relation
  // (score: that number), most first; empty unless asked for.
  std::vector<ScoredExample> examples;
};

// Relations with at least `min_words` scored words, most words first (ties: detector, relation,
// direction); up to `examples` examples each. Throws when the file has no dependency scores or trees.
std::vector<RelationHead> relation_heads(const ResultFile& file, int64_t min_words, std::size_t examples = 0);

}  // namespace attnscan::analysis
