// Strip: whitespace at either end.
#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

std::u32string strip(const NormalizerStep& s, const std::u32string& text) {
  std::size_t b = 0, e = text.size();
  if (s.strip_left)
    while (b < e && unicode::is_rust_whitespace(text[b])) ++b;
  if (s.strip_right)
    while (e > b && unicode::is_rust_whitespace(text[e - 1])) --e;
  return text.substr(b, e - b);
}

}  // namespace attnscan::detail
