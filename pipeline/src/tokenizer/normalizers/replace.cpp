// Replace: a string, or one character repeated.
#include "tokenizer/normalizers/normalizers.hpp"

namespace attnscan::detail {

// NormalizedString::replace: every leftmost, non-overlapping match replaced by `content`.
std::u32string replace(const NormalizerStep& s, const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t len = 0;
    if (!s.find.empty()) {
      if (text.compare(i, s.find.size(), s.find) == 0) len = s.find.size();
    } else {
      while (i + len < text.size() && text[i + len] == s.repeat_char && (s.max_repeat == 0 || len < s.max_repeat)) ++len;
      if (len < s.min_repeat) len = 0;
    }
    if (len == 0) {
      out.push_back(text[i++]);
      continue;
    }
    out += s.content;
    i += len;
  }
  return out;
}

}  // namespace attnscan::detail
