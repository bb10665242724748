#pragma once
// Clark et al. (2019)'s fixed-offset baseline of the dependency detector's relations, from the gold
// trees stored in tokens/dep_head and tokens/dep_relation (docs/patterns.md#dependency): over the
// file's examples, for each relation, the offset o in -5..5 whose prediction "the head of word i is
// word i + o, clamped to the sentence" is right most often. Written as attributes of each
// /scores/<dependency>/<relation>.<direction> group; recomputed whenever a file is finished or merged.
#include <map>
#include <string>

#include "store/layout_file.hpp"

namespace attnscan {

inline constexpr int kMinOffset = -5, kMaxOffset = 5;

// Counts of one relation: its scored words (dependent and head both have tokens) and, per offset
// kMinOffset..kMaxOffset, how many of them the offset predicts.
struct OffsetCounts {
  int64_t words = 0;
  int64_t correct[kMaxOffset - kMinOffset + 1] = {};
  // The offset right most often; ties go to the smaller |o|, then to the negative one.
  int best_offset() const;
  int64_t best_correct() const { return correct[best_offset() - kMinOffset]; }
};

// Per relation (DEPREL up to ':', as the detector counts it), over every example of the file.
std::map<std::string, OffsetCounts> offset_counts(const h5::File& file, std::size_t examples);

// An output of the dependency plugin (also under an alias, `as:`).
bool is_dependency_output(const ScoreOutput& so);
// The two parts of a dependency output's name "<relation>.<direction>".
std::string dependency_relation(const ScoreOutput& so);
std::string dependency_direction(const ScoreOutput& so);

// Attributes words, offset_correct, best_offset and offset_baseline (= offset_correct / words, NaN
// without words) on each dependency output's group, when the file stores trees.
void write_offset_baselines(h5::File& file, const LayoutParams& params);

}  // namespace attnscan
