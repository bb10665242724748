// The Digits pre-tokenizer: Rust's char::is_numeric characters (categories Nd, Nl, No) each alone
// (individual_digits) or in runs.
#include "tokenizer/pre_tokenizers/pre_tokenizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

void digits(const PreTokenizerStep& s, std::vector<NormalizedText>& pieces) {
  std::vector<NormalizedText> out;
  for (const auto& p : pieces) {
    std::vector<std::pair<std::size_t, std::size_t>> matches;  // one per numeric character, as the crate's char pattern
    for (std::size_t i = 0; i < p.size(); ++i)
      if (unicode::category(p.text()[i])[0] == 'N') matches.emplace_back(i, i + 1);
    using B = PreTokenizerStep::SplitBehavior;
    split_by_behavior(p, with_gaps(matches, p.size()), s.individual_digits ? B::Isolated : B::Contiguous, out);
  }
  pieces.swap(out);
}

}  // namespace attnscan::detail
