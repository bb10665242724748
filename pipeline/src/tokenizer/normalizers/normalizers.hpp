#pragma once
// The normalizers of tokenizer.json, one per file in this folder; normalizer.cpp applies a sequence
// of them (fast_text.hpp: normalize). The `tokenizers` crate's character classes throughout. Each
// keeps every character's alignment with the sentence (normalized_text.hpp) as the crate does.
#include "tokenizer/files/tokenizer_json.hpp"
#include "tokenizer/normalized_text.hpp"

namespace attnscan::detail {

void bert_normalize(const NormalizerStep& s, NormalizedText& text);  // bert_normalizer.cpp
// BertNormalizer's steps, which transformers' BasicTokenizer takes with Python's character classes:
// NUL, U+FFFD and controls removed, \t \n \r and `is_space` characters a space;
void clean_text(NormalizedText& text, bool (*is_space)(char32_t));
// a space on either side of each `is_cjk` character; NFD with the nonspacing marks (Mn) removed.
void space_cjk(NormalizedText& text, bool (*is_cjk)(char32_t));
void strip_nonspacing_marks(NormalizedText& text);
void strip_accents(NormalizedText& text);                             // strip_accents.cpp
void replace(const NormalizerStep& s, NormalizedText& text);          // replace.cpp
void strip(const NormalizerStep& s, NormalizedText& text);            // strip.cpp
void prepend(const NormalizerStep& s, NormalizedText& text);          // prepend.cpp

// NFC, NFD, NFKC, NFKD (unicode_forms.cpp): a decomposed character's first part replaces it and the
// rest are inserted; a composed character replaces the first it was made of and removes the others.
enum class UnicodeForm { NFC, NFD, NFKC, NFKD };
void unicode_form(UnicodeForm form, NormalizedText& text);
// Rust's char::to_lowercase per character (tokenizers' Lowercase); extra characters inserted.
void lowercase(NormalizedText& text);
// Python's str.lower() of the whole text (Final_Sigma in context; U+0130 gives two characters).
void python_lowercase(NormalizedText& text);

}  // namespace attnscan::detail
