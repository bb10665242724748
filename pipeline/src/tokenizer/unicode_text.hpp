#pragma once
// Internal Unicode helpers for the tokenizer, matching Python's `str` and `unicodedata` semantics
// (which Hugging Face's BertTokenizer relies on). Backed by utf8proc.
#include <string>
#include <string_view>
#include <vector>

namespace attnscan::unicode {

// Decodes UTF-8; throws attnscan::Error naming the byte offset on invalid input.
std::u32string decode(std::string_view utf8);
std::string encode(std::u32string_view text);
// The UTF-8 bytes of one character into `out`; returns how many (1-4).
std::size_t encode_char(char32_t c, char (&out)[4]);
// The number of characters of valid UTF-8 text (what decode(utf8).size() gives, without decoding).
std::size_t char_count(std::string_view utf8);
// For each byte offset b of UTF-8 text (0..size): the number of characters that start before b.
std::vector<std::size_t> chars_before_bytes(std::string_view utf8);

// Python's str.lower(): full lowercase mapping (U+0130 -> "i\u0307") and the Final_Sigma rule.
std::u32string python_lower(std::u32string_view text);
std::u32string nfc(std::u32string_view text);
std::u32string nfd(std::u32string_view text);
std::u32string nfkc(std::u32string_view text);
std::u32string nfkd(std::u32string_view text);
// Rust's char::to_lowercase applied to each character (full mapping, no Final_Sigma context), as the
// `tokenizers` crate lowercases.
std::u32string lower_each_char(std::u32string_view text);

// Two-letter Unicode general category, e.g. "Mn", "Zs", "Cc".
const char* category(char32_t c);

bool is_control(char32_t c);       // HF _is_control: category C*, except \t \n \r
bool is_whitespace(char32_t c);    // HF _is_whitespace: ' ' \t \n \r or Zs
bool is_punctuation(char32_t c);   // HF _is_punctuation: ASCII non-alnum symbols or P*
bool is_cjk(char32_t c);           // HF _is_chinese_char
bool is_python_space(char32_t c);  // Python str.isspace(), used by str.split()
bool is_rust_whitespace(char32_t c);  // Rust char::is_whitespace (Unicode White_Space)
bool is_rust_word(char32_t c);        // the regex crate's Unicode \w: Alphabetic, M*, Nd, Pc, Join_Control
bool is_cjk_tokenizers(char32_t c);   // the `tokenizers` crate's is_chinese_char (0x2B920.., not 0x2B820..)
bool is_nonspacing_mark(char32_t c);  // category Mn

}  // namespace attnscan::unicode
