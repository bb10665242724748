// The StripAccents normalizer.
#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

// Every combining mark (Mn, Mc, Me) dropped, unlike BertNormalizer (Mn only); no NFD, as tokenizers.
void strip_accents(NormalizedText& text) {
  text.filter([](char32_t c) { return unicode::category(c)[0] != 'M'; });
}

}  // namespace attnscan::detail
