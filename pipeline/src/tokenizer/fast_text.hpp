#pragma once
// The text stages of the Rust "fast" tokenizer as tokenizer.json configures them, with the Rust
// `tokenizers` crate's character classes (char::is_whitespace, per-character lowercasing, no NFC in
// BertNormalizer): normalizers (normalizers/, one per file), added-token splitting
// (added_vocabulary.cpp) and pre-tokenizers (pre_tokenizers/, one per file).
#include <string>
#include <vector>

#include "tokenizer/files/tokenizer_json.hpp"

namespace attnscan::detail {

std::u32string normalize(const std::vector<NormalizerStep>& steps, std::u32string text);
// `at_start`: the text begins the sentence (Metaspace's prepend_scheme "first").
std::vector<std::u32string> pre_tokenize(const std::vector<PreTokenizerStep>& steps, const std::u32string& text,
                                         bool at_start = true);

// One piece of a sentence after added-token splitting: an added token (`added` >= 0, index into
// FastPipeline::added) or normalized text still to pre-tokenize.
struct TextPiece {
  int added = -1;
  std::u32string text;
};
std::vector<TextPiece> split_added_tokens(const FastPipeline& p, const std::u32string& raw);

}  // namespace attnscan::detail
