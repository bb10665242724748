// The ByteLevel pre-tokenizer: a space first (add_prefix_space), GPT-2's split pattern, bytes as characters.
#include "tokenizer/pre_tokenizers/pre_tokenizers.hpp"
#include "tokenizer/pre_tokenizers/byte_level.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

// ByteLevel: a space first (add_prefix_space), GPT-2's split pattern (use_regex), bytes as characters.
void byte_level(const PreTokenizerStep& s, std::vector<std::u32string>& pieces) {
  std::vector<std::u32string> out;
  for (auto& p : pieces) {
    if (s.add_prefix_space && !p.empty() && p[0] != U' ') p.insert(p.begin(), U' ');
    if (!s.use_regex) {
      out.push_back(bytes_to_chars(unicode::encode(p)));
      continue;
    }
    for (const auto& [b, e] : gpt2_split(p))
      out.push_back(bytes_to_chars(unicode::encode(std::u32string_view(p.data() + b, e - b))));
  }
  pieces.swap(out);
}

}  // namespace attnscan::detail
