// BertPreTokenizer and WhitespaceSplit.
#include "tokenizer/pre_tokenizers/pre_tokenizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

bool is_bert_punctuation(char32_t c) { return unicode::is_punctuation(c); }  // ASCII punct. or P*

// Splits every piece: whitespace removed, then (Bert) punctuation isolated.
void split_pieces(std::vector<std::u32string>& pieces, bool (*is_delim)(char32_t), bool isolate) {
  std::vector<std::u32string> out;
  out.reserve(pieces.size());
  for (const auto& p : pieces) {
    std::u32string cur;
    for (char32_t c : p) {
      if (!is_delim(c)) {
        cur.push_back(c);
        continue;
      }
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
      if (isolate) out.emplace_back(1, c);
    }
    if (!cur.empty()) out.push_back(std::move(cur));
  }
  pieces.swap(out);
}

}  // namespace

void bert_split(const PreTokenizerStep& s, std::vector<std::u32string>& pieces) {
  split_pieces(pieces, &unicode::is_rust_whitespace, false);
  if (s.kind == PreTokenizerStep::Kind::Bert) split_pieces(pieces, &is_bert_punctuation, true);
}

}  // namespace attnscan::detail
