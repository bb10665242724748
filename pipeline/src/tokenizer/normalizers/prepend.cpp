// Prepend: a string before the text (Llama 2's "▁"), aligned with its first character; empty text stays empty.
#include "tokenizer/normalizers/normalizers.hpp"

namespace attnscan::detail {

void prepend(const NormalizerStep& s, NormalizedText& text) {
  if (!text.empty()) text.prepend(s.content);
}

}  // namespace attnscan::detail
