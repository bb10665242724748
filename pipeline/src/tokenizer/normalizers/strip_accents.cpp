// The StripAccents normalizer.
#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

// Every combining mark (Mn, Mc, Me) dropped, unlike BertNormalizer (Mn only); no NFD, as tokenizers.
std::u32string strip_accents(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text)
    if (unicode::category(c)[0] != 'M') out.push_back(c);
  return out;
}

}  // namespace attnscan::detail
