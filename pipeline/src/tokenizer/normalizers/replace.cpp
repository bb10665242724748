// Replace: a string, or one character repeated.
#include "tokenizer/normalizers/normalizers.hpp"

namespace attnscan::detail {

// NormalizedString::replace: every leftmost, non-overlapping match replaced by `content`, whose
// characters are all inserted after the match (aligned with its last character).
void replace(const NormalizerStep& s, NormalizedText& text) {
  const std::u32string& t = text.text();
  std::vector<CharChange> changes;
  changes.reserve(t.size());
  std::size_t skip = 0;  // matched characters not yet passed
  bool matched = false;
  std::size_t i = 0;
  while (i < t.size()) {
    std::size_t len = 0;
    if (!s.find.empty()) {
      if (t.compare(i, s.find.size(), s.find) == 0) len = s.find.size();
    } else {
      while (i + len < t.size() && t[i + len] == s.repeat_char && (s.max_repeat == 0 || len < s.max_repeat)) ++len;
      if (len < s.min_repeat) len = 0;
    }
    if (len == 0) {
      changes.push_back({t[i++], 0, skip});
      skip = 0;
      continue;
    }
    matched = true;
    skip += len;
    for (char32_t c : s.content) {
      changes.push_back({c, 1, skip});
      skip = 0;
    }
    i += len;
  }
  if (matched) text.transform(changes);
}

}  // namespace attnscan::detail
