// The Metaspace pre-tokenizer.
#include "tokenizer/pre_tokenizers/pre_tokenizers.hpp"

namespace attnscan::detail {

// Metaspace: spaces become the replacement, which is prepended and then starts every piece.
void metaspace(const PreTokenizerStep& s, std::vector<std::u32string>& pieces, bool at_start) {
  std::vector<std::u32string> out;
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    auto p = pieces[k];
    for (auto& c : p)
      if (c == U' ') c = s.replacement;
    using P = PreTokenizerStep::Prepend;
    const bool prepend = s.prepend == P::Always || (s.prepend == P::First && at_start && k == 0);
    if (prepend && !p.empty() && p[0] != s.replacement) p.insert(p.begin(), s.replacement);
    if (!s.split) {
      if (!p.empty()) out.push_back(std::move(p));
      continue;
    }
    std::size_t begin = 0;  // MergedWithNext: each replacement starts a piece
    for (std::size_t i = 1; i <= p.size(); ++i) {
      if (i == p.size() || p[i] == s.replacement) {
        out.push_back(p.substr(begin, i - begin));
        begin = i;
      }
    }
  }
  pieces.swap(out);
}

}  // namespace attnscan::detail
