// A sequence of tokenizer.json's normalizers, applied in order.
#include "tokenizer/fast_text.hpp"
#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/normalizers/precompiled_charsmap.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

std::u32string normalize(const std::vector<NormalizerStep>& steps, std::u32string text) {
  using K = NormalizerStep::Kind;
  for (const auto& s : steps) {
    switch (s.kind) {
      case K::Bert: text = bert_normalize(s, std::move(text)); break;
      case K::NFC: text = unicode::nfc(text); break;
      case K::NFD: text = unicode::nfd(text); break;
      case K::NFKC: text = unicode::nfkc(text); break;
      case K::NFKD: text = unicode::nfkd(text); break;
      case K::Lowercase: text = unicode::lower_each_char(text); break;
      case K::StripAccents: text = strip_accents(text); break;  // Mn, Mc and Me; no NFD (as tokenizers)
      case K::Precompiled: text = s.charsmap->normalize(text); break;
      case K::Replace: text = replace(s, text); break;
      case K::Strip: text = strip(s, text); break;
    }
  }
  return text;
}

}  // namespace attnscan::detail
