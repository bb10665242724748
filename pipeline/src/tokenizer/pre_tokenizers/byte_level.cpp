#include "tokenizer/pre_tokenizers/byte_level.hpp"

#include <algorithm>
#include <array>

#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

bool is_letter(char32_t c) { return unicode::category(c)[0] == 'L'; }
bool is_number(char32_t c) { return unicode::category(c)[0] == 'N'; }
bool is_space(char32_t c) { return unicode::is_rust_whitespace(c); }
bool is_other(char32_t c) { return !is_space(c) && !is_letter(c) && !is_number(c); }

struct ByteMap {
  std::array<char32_t, 256> to_char{};
  ByteMap() {
    auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) to_char[b] = printable(b) ? static_cast<char32_t>(b) : next++;
  }
};

const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> gpt2_split(const std::u32string& t) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  const std::size_t n = t.size();
  std::size_t i = 0;
  auto run = [&](std::size_t from, bool (*cls)(char32_t)) {
    while (from < n && cls(t[from])) ++from;
    return from;
  };
  while (i < n) {
    std::size_t end = i;
    if (t[i] == U'\'' && i + 1 < n) {  // contractions, case-sensitive
      const char32_t c1 = t[i + 1];
      if (c1 == U's' || c1 == U't' || c1 == U'm' || c1 == U'd') end = i + 2;
      else if (i + 2 < n && ((c1 == U'r' && t[i + 2] == U'e') || (c1 == U'v' && t[i + 2] == U'e') ||
                             (c1 == U'l' && t[i + 2] == U'l')))
        end = i + 3;
    }
    if (end == i) {
      const std::size_t s = t[i] == U' ' && i + 1 < n ? i + 1 : i;  // the optional leading space
      for (auto cls : {&is_letter, &is_number, &is_other}) {  // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+'
        if (cls(t[s])) {
          end = run(s, cls);
          break;
        }
      }
    }
    if (end == i) {  // \s+(?!\S) then \s+
      const std::size_t ws = run(i, &is_space);
      if (ws == n || ws - i == 1) end = ws;
      else end = ws - 1;  // leave the last space to the next chunk
    }
    out.emplace_back(i, end);
    i = end;
  }
  return out;
}

std::u32string bytes_to_chars(const std::string& utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  for (unsigned char b : utf8) out.push_back(byte_map().to_char[b]);
  return out;
}

void to_byte_chars(NormalizedText& text) {
  const auto& to_char = byte_map().to_char;
  if (std::all_of(text.text().begin(), text.text().end(), [](char32_t c) { return c < 0x80; }))
    return text.map([&](char32_t c) { return to_char[c]; });  // one byte each: the alignment stays
  std::vector<CharChange> changes;
  changes.reserve(text.size() * 2);
  char bytes[4];
  for (char32_t c : text.text()) {
    const std::size_t n = unicode::encode_char(c, bytes);
    for (std::size_t k = 0; k < n; ++k)
      changes.push_back({to_char[static_cast<unsigned char>(bytes[k])], k > 0 ? 1 : 0});
  }
  text.transform(changes);
}

std::string chars_to_bytes(const std::u32string& chars) {
  std::string out;
  for (char32_t c : chars) {
    if (c < 256 && byte_map().to_char[c] == c) {
      out.push_back(static_cast<char>(c));
    } else if (c >= 256 && c < 256 + 68) {
      int b = 0;
      while (byte_map().to_char[b] != c) ++b;
      out.push_back(static_cast<char>(b));
    } else {
      out += unicode::encode(std::u32string_view(&c, 1));
    }
  }
  return out;
}

}  // namespace attnscan::detail
