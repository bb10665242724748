#pragma once
// The pre-tokenizers of tokenizer.json, one per file in this folder; pre_tokenizer.cpp applies a
// sequence of them (fast_text.hpp: pre_tokenize). Each splits every piece into slices (empty ones
// dropped), each character keeping its alignment with the sentence.
#include <vector>

#include "tokenizer/files/tokenizer_json.hpp"
#include "tokenizer/normalized_text.hpp"

namespace attnscan::detail {

// BertPreTokenizer (whitespace removed, then punctuation isolated) and WhitespaceSplit.
void bert_split(const PreTokenizerStep& s, std::vector<NormalizedText>& pieces);  // bert_pre_tokenizer.cpp
void byte_level(const PreTokenizerStep& s, std::vector<NormalizedText>& pieces);  // byte_level_step.cpp
void metaspace(const PreTokenizerStep& s, std::vector<NormalizedText>& pieces);   // metaspace.cpp
void split(const PreTokenizerStep& s, std::vector<NormalizedText>& pieces);       // split.cpp
void digits(const PreTokenizerStep& s, std::vector<NormalizedText>& pieces);      // digits.cpp

// A pattern's matches and the text between them, [begin, end) in characters, covering a piece (the
// crate's find_matches; an empty piece is one empty non-match).
struct PatternSpan {
  std::size_t begin, end;
  bool is_match;
};
std::vector<PatternSpan> with_gaps(const std::vector<std::pair<std::size_t, std::size_t>>& matches, std::size_t size);
// The piece's slices as the crate's NormalizedString::split cuts them with `behavior` (split.cpp).
void split_by_behavior(const NormalizedText& piece, const std::vector<PatternSpan>& spans,
                       PreTokenizerStep::SplitBehavior behavior, std::vector<NormalizedText>& out);

// Appends `piece.slice(begin, end)` unless empty.
void push_slice(const NormalizedText& piece, std::size_t begin, std::size_t end, std::vector<NormalizedText>& out);

}  // namespace attnscan::detail
