#pragma once
// The pre-tokenizers of tokenizer.json, one per file in this folder; pre_tokenizer.cpp applies a
// sequence of them (fast_text.hpp: pre_tokenize). Each splits every piece in place.
#include <string>
#include <vector>

#include "tokenizer/files/tokenizer_json.hpp"

namespace attnscan::detail {

// BertPreTokenizer (whitespace removed, then punctuation isolated) and WhitespaceSplit.
void bert_split(const PreTokenizerStep& s, std::vector<std::u32string>& pieces);  // bert_pre_tokenizer.cpp
void byte_level(const PreTokenizerStep& s, std::vector<std::u32string>& pieces);  // byte_level_step.cpp
// `at_start`: the pieces begin the sentence (prepend_scheme "first").
void metaspace(const PreTokenizerStep& s, std::vector<std::u32string>& pieces, bool at_start);  // metaspace.cpp

}  // namespace attnscan::detail
