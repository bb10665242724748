#pragma once
// The normalizers of tokenizer.json, one per file in this folder; normalizer.cpp applies a sequence
// of them (fast_text.hpp: normalize). The `tokenizers` crate's character classes throughout.
#include <string>

#include "tokenizer/files/tokenizer_json.hpp"

namespace attnscan::detail {

std::u32string bert_normalize(const NormalizerStep& s, std::u32string text);  // bert_normalizer.cpp
std::u32string strip_accents(const std::u32string& text);                     // strip_accents.cpp
std::u32string replace(const NormalizerStep& s, const std::u32string& text);  // replace.cpp
std::u32string strip(const NormalizerStep& s, const std::u32string& text);    // strip.cpp

}  // namespace attnscan::detail
