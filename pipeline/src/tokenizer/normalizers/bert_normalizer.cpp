// BertNormalizer: clean, CJK spacing, accents (NFD, Mn dropped), lowercase; no NFC.
#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

std::u32string drop_nonspacing_marks(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text)
    if (!unicode::is_nonspacing_mark(c)) out.push_back(c);
  return out;
}

}  // namespace

// tokenizers' BertNormalizer: clean, CJK spacing, then accents, then lowercase; no NFC.
std::u32string bert_normalize(const NormalizerStep& s, std::u32string text) {
  if (s.clean_text) {
    std::u32string out;
    out.reserve(text.size());
    for (char32_t c : text) {
      if (c == 0 || c == 0xFFFD || unicode::is_control(c)) continue;  // filter first, then map
      out.push_back(c == U'\t' || c == U'\n' || c == U'\r' || unicode::is_rust_whitespace(c) ? U' ' : c);
    }
    text.swap(out);
  }
  if (s.handle_chinese_chars) {
    std::u32string out;
    out.reserve(text.size());
    for (char32_t c : text) {
      if (unicode::is_cjk_tokenizers(c)) {
        out.push_back(U' ');
        out.push_back(c);
        out.push_back(U' ');
      } else {
        out.push_back(c);
      }
    }
    text.swap(out);
  }
  if (s.strip_accents.value_or(s.lowercase)) text = drop_nonspacing_marks(unicode::nfd(text));
  if (s.lowercase) text = unicode::lower_each_char(text);
  return text;
}

}  // namespace attnscan::detail
