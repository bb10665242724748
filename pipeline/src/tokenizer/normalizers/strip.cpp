// Strip: whitespace at either end.
#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

// The crate's lrstrip: the leading spaces removed before the first character, the trailing ones with the last.
void strip(const NormalizerStep& s, NormalizedText& text) {
  const std::u32string& t = text.text();
  std::size_t b = 0, e = t.size();
  if (s.strip_left)
    while (b < e && unicode::is_rust_whitespace(t[b])) ++b;
  if (s.strip_right)
    while (e > b && unicode::is_rust_whitespace(t[e - 1])) --e;
  if (b == 0 && e == t.size()) return;
  std::vector<CharChange> changes;
  for (std::size_t i = b; i < e; ++i) changes.push_back({t[i], 0});
  if (!changes.empty()) changes.back().change = -static_cast<int>(t.size() - e);
  text.transform(changes, b);
}

}  // namespace attnscan::detail
