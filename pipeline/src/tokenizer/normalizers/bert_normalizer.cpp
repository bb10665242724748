// BertNormalizer: clean, CJK spacing, accents (NFD, Mn dropped), lowercase; no NFC.
#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

void clean_text(NormalizedText& text, bool (*is_space)(char32_t)) {  // filter first, then map
  text.filter([](char32_t c) { return !(c == 0 || c == 0xFFFD || unicode::is_control(c)); });
  text.map([&](char32_t c) { return c == U'\t' || c == U'\n' || c == U'\r' || is_space(c) ? U' ' : c; });
}

void space_cjk(NormalizedText& text, bool (*is_cjk)(char32_t)) {  // " c " with the spaces aligned with c
  text.expand([&](char32_t c) { return is_cjk(c) ? std::u32string{U' ', c, U' '} : std::u32string(1, c); });
}

void strip_nonspacing_marks(NormalizedText& text) {
  unicode_form(UnicodeForm::NFD, text);
  text.filter([](char32_t c) { return !unicode::is_nonspacing_mark(c); });
}

// tokenizers' BertNormalizer: clean, CJK spacing, then accents, then lowercase; no NFC.
void bert_normalize(const NormalizerStep& s, NormalizedText& text) {
  if (s.clean_text) clean_text(text, unicode::is_rust_whitespace);
  if (s.handle_chinese_chars) space_cjk(text, unicode::is_cjk_tokenizers);
  if (s.strip_accents.value_or(s.lowercase)) strip_nonspacing_marks(text);
  if (s.lowercase) lowercase(text);
}

}  // namespace attnscan::detail
