// A sequence of tokenizer.json's normalizers, applied in order.
#include "tokenizer/fast_text.hpp"
#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/normalizers/precompiled_charsmap.hpp"

namespace attnscan::detail {

void normalize(const std::vector<NormalizerStep>& steps, NormalizedText& text) {
  using K = NormalizerStep::Kind;
  for (const auto& s : steps) {
    switch (s.kind) {
      case K::Bert: bert_normalize(s, text); break;
      case K::NFC: unicode_form(UnicodeForm::NFC, text); break;
      case K::NFD: unicode_form(UnicodeForm::NFD, text); break;
      case K::NFKC: unicode_form(UnicodeForm::NFKC, text); break;
      case K::NFKD: unicode_form(UnicodeForm::NFKD, text); break;
      case K::Lowercase: lowercase(text); break;
      case K::StripAccents: strip_accents(text); break;  // Mn, Mc and Me; no NFD (as tokenizers)
      case K::Precompiled: s.charsmap->normalize(text); break;
      case K::Replace: replace(s, text); break;
      case K::Strip: strip(s, text); break;
      case K::Prepend: prepend(s, text); break;
    }
  }
}

std::u32string normalize(const std::vector<NormalizerStep>& steps, std::u32string text) {
  NormalizedText t(std::move(text));
  normalize(steps, t);
  return t.text();
}

}  // namespace attnscan::detail
