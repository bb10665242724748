// The Split pre-tokenizer: a pattern's matches (split_regex.hpp), inverted or not, each piece split by
// the behaviour; and the behaviours themselves, which Digits shares.
#include "tokenizer/pre_tokenizers/pre_tokenizers.hpp"
#include "tokenizer/pre_tokenizers/split_regex.hpp"

namespace attnscan::detail {

namespace {

using Behavior = PreTokenizerStep::SplitBehavior;

// Consecutive spans that `join` says belong together, merged (the crate's folds over find_matches).
template <typename Join>
std::vector<PatternSpan> fold(const std::vector<PatternSpan>& spans, Join join) {
  std::vector<PatternSpan> out;
  bool previous_match = false;
  for (const auto& s : spans) {
    if (!out.empty() && join(s.is_match, previous_match)) out.back().end = s.end;
    else out.push_back({s.begin, s.end, false});
    previous_match = s.is_match;
  }
  return out;
}

}  // namespace

void split_by_behavior(const NormalizedText& piece, const std::vector<PatternSpan>& spans, Behavior behavior,
                       std::vector<NormalizedText>& out) {
  std::vector<PatternSpan> kept;  // is_match here: to be removed
  switch (behavior) {
    case Behavior::Removed: kept = spans; break;
    case Behavior::Isolated:
      for (const auto& s : spans) kept.push_back({s.begin, s.end, false});
      break;
    case Behavior::Contiguous:
      kept = fold(spans, [](bool match, bool previous) { return match == previous; });
      break;
    case Behavior::MergedWithPrevious:
      kept = fold(spans, [](bool match, bool previous) { return match && !previous; });
      break;
    case Behavior::MergedWithNext: {  // the same fold from the right: a match joins the span after it
      std::vector<PatternSpan> reversed(spans.rbegin(), spans.rend());
      std::vector<PatternSpan> merged;
      bool previous_match = false;
      for (const auto& s : reversed) {
        if (!merged.empty() && s.is_match && !previous_match) merged.back().begin = s.begin;
        else merged.push_back({s.begin, s.end, false});
        previous_match = s.is_match;
      }
      kept.assign(merged.rbegin(), merged.rend());
      break;
    }
  }
  for (const auto& s : kept)
    if (!s.is_match) push_slice(piece, s.begin, s.end, out);
}

std::vector<PatternSpan> with_gaps(const std::vector<std::pair<std::size_t, std::size_t>>& matches, std::size_t size) {
  std::vector<PatternSpan> spans;
  if (size == 0) return {{0, 0, false}};
  std::size_t previous = 0;
  for (const auto& [begin, end] : matches) {
    if (previous != begin) spans.push_back({previous, begin, false});
    spans.push_back({begin, end, true});
    previous = end;
  }
  if (previous != size) spans.push_back({previous, size, false});
  return spans;
}

void split(const PreTokenizerStep& s, std::vector<NormalizedText>& pieces) {
  std::vector<NormalizedText> out;
  for (const auto& p : pieces) {
    std::vector<PatternSpan> spans = with_gaps(s.pattern->find(p.text()), p.size());
    if (s.invert)
      for (auto& span : spans) span.is_match = !span.is_match;
    split_by_behavior(p, spans, s.behavior, out);
  }
  pieces.swap(out);
}

}  // namespace attnscan::detail
