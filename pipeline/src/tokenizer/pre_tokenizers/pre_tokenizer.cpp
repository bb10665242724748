// A sequence of tokenizer.json's pre-tokenizers, applied in order.
#include "tokenizer/fast_text.hpp"
#include "tokenizer/pre_tokenizers/pre_tokenizers.hpp"

namespace attnscan::detail {

std::vector<std::u32string> pre_tokenize(const std::vector<PreTokenizerStep>& steps, const std::u32string& text,
                                         bool at_start) {
  std::vector<std::u32string> pieces;
  if (!text.empty()) pieces.push_back(text);
  using K = PreTokenizerStep::Kind;
  for (const auto& s : steps) {
    if (s.kind == K::ByteLevel) {
      byte_level(s, pieces);
    } else if (s.kind == K::Metaspace) {
      metaspace(s, pieces, at_start);
    } else {
      bert_split(s, pieces);
    }
  }
  return pieces;
}

}  // namespace attnscan::detail
