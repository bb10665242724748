// How a vocabulary token reads to a person (tokenizer.hpp: readable_token).
#include <cstdio>
#include <utf8proc.h>

#include "tokenizer/tokenizer.hpp"
#include "tokenizer/pre_tokenizers/byte_level.hpp"

namespace attnscan {

namespace {

constexpr const char* kWordStart = "\xE2\x96\x81";  // U+2581, SentencePiece's word-start marker
constexpr const char* kVisibleSpace = "\xE2\x90\xA3";  // U+2423, a token that is only a space

// Line breaks and tabs as symbols: a label of "\n" (a decoder's pair separator) would show nothing.
std::string show_line_breaks(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += "\xE2\x86\xB5";       // U+21B5
    else if (c == '\r') out += "\xE2\x90\x8D";  // U+240D
    else if (c == '\t') out += "\xE2\x87\xA5";  // U+21E5
    else out += c;
  }
  return out;
}

// Valid UTF-8 as it is; every byte of a sequence cut between tokens as <0xNN> (SentencePiece's spelling).
std::string bytes_readably(const std::string& bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size();) {
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(bytes.data() + i),
                                    static_cast<utf8proc_ssize_t>(bytes.size() - i), &cp);
    if (n > 0) {
      out.append(bytes, i, static_cast<std::size_t>(n));
      i += static_cast<std::size_t>(n);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "<0x%02X>", static_cast<unsigned char>(bytes[i]));
      out += hex;
      ++i;
    }
  }
  return out;
}

std::u32string decode(const std::string& utf8) {
  std::u32string out;
  for (std::size_t i = 0; i < utf8.size();) {
    utf8proc_int32_t cp = 0;
    auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data() + i),
                              static_cast<utf8proc_ssize_t>(utf8.size() - i), &cp);
    if (n <= 0) return {};
    out.push_back(static_cast<char32_t>(cp));
    i += static_cast<std::size_t>(n);
  }
  return out;
}

// A leading space becomes the word-start marker; a token that is only spaces, visible spaces.
std::string mark_word_start(std::string text) {
  if (text.find_first_not_of(' ') == std::string::npos) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) out += kVisibleSpace;
    return out;
  }
  if (!text.empty() && text[0] == ' ') text.replace(0, 1, kWordStart);
  return text;
}

}  // namespace

std::string readable_token(const std::string& token, SubwordKind kind) {
  switch (kind) {
    case SubwordKind::WordPiece:
    case SubwordKind::Unigram:  // already text: "▁he", "llo"
    case SubwordKind::Bpe:      // "▁he", "<0xE4>"
    case SubwordKind::WordLevel:
      return show_line_breaks(token);
    case SubwordKind::ByteLevelBpe: {
      const std::u32string chars = decode(token);
      if (chars.empty()) return token;
      for (char32_t c : chars)  // an added token such as "<s>" is not in GPT-2's byte characters
        if (detail::bytes_to_chars(detail::chars_to_bytes(std::u32string(1, c))) != std::u32string(1, c)) return token;
      return show_line_breaks(mark_word_start(bytes_readably(detail::chars_to_bytes(chars))));
    }
  }
  return token;
}

std::optional<SubwordKind> subword_kind_named(const std::string& name) {
  for (auto k : {SubwordKind::WordPiece, SubwordKind::ByteLevelBpe, SubwordKind::Unigram, SubwordKind::WordLevel,
                 SubwordKind::Bpe})
    if (name == to_string(k)) return k;
  return std::nullopt;
}

}  // namespace attnscan
