#pragma once
// Text on its way through the tokenizer's stages, each character carrying the span of the sentence
// (Unicode code points, [start, end)) it came from, as the `tokenizers` crate's NormalizedString
// carries its alignments. Normalizers transform it, added-token matching and pre-tokenizers slice
// it, and a model's token covering characters [b, e) of a piece covers original(b, e) of the
// sentence: character offsets come out of the pipeline, no rule restated afterwards.
//
// A transform is the new text as (character, change) pairs, in the crate's convention:
//   change 0: the character replaces the next old one and takes its span;
//   change -n: it replaces the next old one, and the n old characters after it are removed;
//   change +1: it is inserted and takes the span of the last old character consumed so far;
//   skip n: the n old characters before it are removed first (a Replace's match: its content is
//   inserted after the matched characters, taking the last one's span).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.hpp"

namespace attnscan::detail {

struct CharChange {
  char32_t c;
  int change;
  std::size_t skip = 0;
};

class NormalizedText {
 public:
  NormalizedText() = default;
  // `text` as written, character i aligned with [first + i, first + i + 1).
  explicit NormalizedText(std::u32string text, int64_t first = 0);

  const std::u32string& text() const { return text_; }
  std::size_t size() const { return text_.size(); }
  bool empty() const { return text_.empty(); }
  // Where this piece starts in the sentence (the crate's original_shift).
  int64_t origin() const { return origin_; }
  // The sentence span of characters [begin, end): the first one's start to the last one's end; an empty
  // range gives origin() + begin (as the crate returns an empty range unconverted).
  CharSpan original(std::size_t begin, std::size_t end) const;
  NormalizedText slice(std::size_t begin, std::size_t end) const&;
  // The same, taking this text over when the slice is all of it (no copy).
  NormalizedText slice(std::size_t begin, std::size_t end) &&;

  // `removed_first`: old characters removed before the first new one.
  void transform(const std::vector<CharChange>& changes, std::size_t removed_first = 0);
  template <typename F>
  void map(F&& f) {  // each character to one character
    for (auto& c : text_) c = f(c);
  }
  template <typename Keep>
  void filter(Keep&& keep);
  // `s` before the first character, all of it aligned with that character; nothing when empty.
  void prepend(std::u32string_view s);
  // `tail`'s characters after these, each with its own span (pieces joined as Python joins strings).
  void append(const NormalizedText& tail);
  // Each character to the string f gives (its first character replacing it, the others inserted).
  template <typename F>
  void expand(F&& f);

 private:
  std::u32string text_;
  // Each character's span, 32-bit (a sentence is far below 2^31 characters): half of CharSpan's
  // bytes to copy at every stage.
  struct Span {
    int32_t start, end;
  };
  std::vector<Span> align_;
  int64_t origin_ = 0;
};

template <typename Keep>
void NormalizedText::filter(Keep&& keep) {
  // A removed character goes with the kept one before it; those before the first kept one are removed_first.
  if (std::all_of(text_.begin(), text_.end(), keep)) return;
  std::vector<CharChange> changes;
  changes.reserve(text_.size());
  std::size_t removed_first = 0;
  for (char32_t c : text_) {
    if (keep(c)) {
      changes.push_back({c, 0});
    } else if (changes.empty()) {
      ++removed_first;
    } else {
      --changes.back().change;
    }
  }
  transform(changes, removed_first);
}

template <typename F>
void NormalizedText::expand(F&& f) {
  if (std::all_of(text_.begin(), text_.end(), [&](char32_t c) {
        const std::u32string out = f(c);
        return out.size() == 1 && out[0] == c;
      }))
    return;
  std::vector<CharChange> changes;
  changes.reserve(text_.size());
  std::size_t removed_first = 0;
  for (char32_t c : text_) {
    const std::u32string out = f(c);
    if (out.empty()) {  // removed: with the character before it, as filter
      if (changes.empty()) ++removed_first;
      else --changes.back().change;
    }
    for (std::size_t i = 0; i < out.size(); ++i) changes.push_back({out[i], i > 0 ? 1 : 0});
  }
  transform(changes, removed_first);
}

}  // namespace attnscan::detail
