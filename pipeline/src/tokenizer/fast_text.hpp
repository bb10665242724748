#pragma once
// The text stages of the Rust "fast" tokenizer as tokenizer.json configures them, with the Rust
// `tokenizers` crate's character classes (char::is_whitespace, per-character lowercasing, no NFC in
// BertNormalizer): normalizers (normalizers/, one per file), added-token splitting
// (added_vocabulary.cpp) and pre-tokenizers (pre_tokenizers/, one per file). Every stage keeps each
// character's alignment with the sentence (normalized_text.hpp).
#include <string>
#include <vector>

#include "tokenizer/files/tokenizer_json.hpp"
#include "tokenizer/normalized_text.hpp"

namespace attnscan::detail {

void normalize(const std::vector<NormalizerStep>& steps, NormalizedText& text);
std::u32string normalize(const std::vector<NormalizerStep>& steps, std::u32string text);  // the text alone
// The pieces (words) of `text`; empty ones dropped. Metaspace's prepend_scheme "first" prepends to a
// piece that starts the sentence (origin 0), as the crate decides.
std::vector<NormalizedText> pre_tokenize(const std::vector<PreTokenizerStep>& steps, NormalizedText text);

// One piece of a sentence after added-token splitting: an added token (`added` >= 0, index into
// FastPipeline::added; `text` the characters it matched, stripped whitespace included) or
// normalized text still to pre-tokenize.
struct TextPiece {
  int added = -1;
  NormalizedText text;
};
std::vector<TextPiece> split_added_tokens(const FastPipeline& p, const std::u32string& raw);

}  // namespace attnscan::detail
