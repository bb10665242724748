// A sequence of tokenizer.json's pre-tokenizers, applied in order.
#include "tokenizer/fast_text.hpp"
#include "tokenizer/pre_tokenizers/pre_tokenizers.hpp"

namespace attnscan::detail {

void push_slice(const NormalizedText& piece, std::size_t begin, std::size_t end, std::vector<NormalizedText>& out) {
  if (end > begin) out.push_back(piece.slice(begin, end));
}

std::vector<NormalizedText> pre_tokenize(const std::vector<PreTokenizerStep>& steps, NormalizedText text) {
  std::vector<NormalizedText> pieces;
  if (!text.empty()) pieces.push_back(std::move(text));
  using K = PreTokenizerStep::Kind;
  for (const auto& s : steps) {
    if (s.kind == K::ByteLevel) {
      byte_level(s, pieces);
    } else if (s.kind == K::Metaspace) {
      metaspace(s, pieces);
    } else if (s.kind == K::Split) {
      split(s, pieces);
    } else if (s.kind == K::Digits) {
      digits(s, pieces);
    } else {
      bert_split(s, pieces);
    }
  }
  return pieces;
}

}  // namespace attnscan::detail
