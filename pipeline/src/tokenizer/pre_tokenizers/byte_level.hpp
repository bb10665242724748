#pragma once
// Byte-level BPE's text stages, shared by the slow RobertaTokenizer and tokenizer.json's ByteLevel
// pre-tokenizer: GPT-2's split pattern and the byte-to-character map.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/normalized_text.hpp"

namespace attnscan::detail {

// The chunks [begin, end) of GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (\s: Unicode White_Space; \p{L}, \p{N}: general categories L*, N*), matched by hand.
std::vector<std::pair<std::size_t, std::size_t>> gpt2_split(const std::u32string& text);

// Each UTF-8 byte of `utf8` as GPT-2's printable character (bytes_to_unicode: "!".."~", "¡".."¬",
// "®".."ÿ" map to themselves, the other bytes to U+0100 onwards; space is "Ġ").
std::u32string bytes_to_chars(const std::string& utf8);
// Each character of `text` to GPT-2's characters of its UTF-8 bytes, all aligned with it.
void to_byte_chars(NormalizedText& text);
// The inverse, for word text; characters outside the map are kept as they are.
std::string chars_to_bytes(const std::u32string& chars);

}  // namespace attnscan::detail
