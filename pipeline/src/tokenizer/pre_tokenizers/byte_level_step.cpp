// The ByteLevel pre-tokenizer: a space first (add_prefix_space), GPT-2's split pattern, bytes as characters.
#include "tokenizer/pre_tokenizers/byte_level.hpp"
#include "tokenizer/pre_tokenizers/pre_tokenizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

void byte_level(const PreTokenizerStep& s, std::vector<NormalizedText>& pieces) {
  std::vector<NormalizedText> out;
  for (auto& p : pieces) {
    if (s.add_prefix_space && !p.empty() && p.text()[0] != U' ') p.prepend(U" ");
    const std::size_t first = out.size();
    if (!s.use_regex) push_slice(p, 0, p.size(), out);
    else
      for (const auto& [b, e] : gpt2_split(p.text())) push_slice(p, b, e, out);
    for (std::size_t k = first; k < out.size(); ++k) to_byte_chars(out[k]);
  }
  pieces.swap(out);
}

}  // namespace attnscan::detail
