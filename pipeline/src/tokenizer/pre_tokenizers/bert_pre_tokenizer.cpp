// BertPreTokenizer and WhitespaceSplit.
#include "tokenizer/pre_tokenizers/pre_tokenizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

bool is_bert_punctuation(char32_t c) { return unicode::is_punctuation(c); }  // ASCII punct. or P*

// Splits every piece at the delimiters: removed, or (isolate) each a piece of its own.
void split_pieces(std::vector<NormalizedText>& pieces, bool (*is_delim)(char32_t), bool isolate) {
  std::vector<NormalizedText> out;
  out.reserve(pieces.size());
  for (const auto& p : pieces) {
    const std::u32string& t = p.text();
    std::size_t begin = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (!is_delim(t[i])) continue;
      push_slice(p, begin, i, out);
      if (isolate) push_slice(p, i, i + 1, out);
      begin = i + 1;
    }
    push_slice(p, begin, t.size(), out);
  }
  pieces.swap(out);
}

}  // namespace

void bert_split(const PreTokenizerStep& s, std::vector<NormalizedText>& pieces) {
  split_pieces(pieces, &unicode::is_rust_whitespace, false);
  if (s.kind == PreTokenizerStep::Kind::Bert) split_pieces(pieces, &is_bert_punctuation, true);
}

}  // namespace attnscan::detail
