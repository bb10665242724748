// The Metaspace pre-tokenizer.
#include "tokenizer/pre_tokenizers/pre_tokenizers.hpp"

namespace attnscan::detail {

// Metaspace: spaces become the replacement (aligned with the space), which is prepended (aligned
// with the first character) and then starts every piece.
void metaspace(const PreTokenizerStep& s, std::vector<NormalizedText>& pieces) {
  std::vector<NormalizedText> out;
  for (auto& p : pieces) {
    p.map([&](char32_t c) { return c == U' ' ? s.replacement : c; });
    using P = PreTokenizerStep::Prepend;
    const bool prepend = s.prepend == P::Always || (s.prepend == P::First && p.origin() == 0);
    if (prepend && !p.empty() && p.text()[0] != s.replacement) p.prepend(std::u32string(1, s.replacement));
    if (!s.split) {
      if (!p.empty()) out.push_back(std::move(p));
      continue;
    }
    std::size_t begin = 0;  // MergedWithNext: each replacement starts a piece
    for (std::size_t i = 1; i <= p.size(); ++i) {
      if (i == p.size() || p.text()[i] == s.replacement) {
        push_slice(p, begin, i, out);
        begin = i;
      }
    }
  }
  pieces.swap(out);
}

}  // namespace attnscan::detail
