#include "tokenizer/unicode_text.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

#include "common/error.hpp"

namespace attnscan::unicode {

std::u32string decode(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(utf8.data());
  utf8proc_ssize_t pos = 0, n = static_cast<utf8proc_ssize_t>(utf8.size());
  while (pos < n) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t len = utf8proc_iterate(p + pos, n - pos, &cp);
    if (len <= 0 || cp < 0)
      throw Error("invalid UTF-8 at byte " + std::to_string(pos) + " of the text");
    out.push_back(static_cast<char32_t>(cp));
    pos += len;
  }
  return out;
}

std::size_t encode_char(char32_t c, char (&out)[4]) {
  return static_cast<std::size_t>(
      utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), reinterpret_cast<utf8proc_uint8_t*>(out)));
}

std::string encode(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[4];
  for (char32_t c : text) out.append(buf, encode_char(c, buf));
  return out;
}

std::size_t char_count(std::string_view utf8) {
  std::size_t n = 0;
  for (char b : utf8) n += (static_cast<unsigned char>(b) & 0xC0) != 0x80;
  return n;
}

const char* category(char32_t c) {
  return utf8proc_category_string(static_cast<utf8proc_int32_t>(c));
}

static bool is_cased(char32_t c) {
  auto cp = static_cast<utf8proc_int32_t>(c);
  auto cat = utf8proc_category(cp);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT ||
         utf8proc_tolower(cp) != cp || utf8proc_toupper(cp) != cp;
}

static bool is_case_ignorable(char32_t c) {
  switch (c) {  // Word_Break MidLetter / MidNumLet / Single_Quote
    case 0x27: case 0x2E: case 0x3A: case 0xB7: case 0x387: case 0x5F4: case 0x2018: case 0x2019:
    case 0x2024: case 0x2027: case 0xFE13: case 0xFE52: case 0xFE55: case 0xFF07: case 0xFF0E:
    case 0xFF1A:
      return true;
    default:
      break;
  }
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_ME || cat == UTF8PROC_CATEGORY_CF ||
         cat == UTF8PROC_CATEGORY_LM || cat == UTF8PROC_CATEGORY_SK;
}

// CPython's handle_capital_sigma.
static bool final_sigma(std::u32string_view s, std::size_t i) {
  std::ptrdiff_t j = static_cast<std::ptrdiff_t>(i) - 1;
  while (j >= 0 && is_case_ignorable(s[static_cast<std::size_t>(j)])) --j;
  if (j < 0 || !is_cased(s[static_cast<std::size_t>(j)])) return false;
  std::size_t k = i + 1;
  while (k < s.size() && is_case_ignorable(s[k])) ++k;
  return k == s.size() || !is_cased(s[k]);
}

std::vector<std::size_t> chars_before_bytes(std::string_view utf8) {  // as char_count, at every byte
  std::vector<std::size_t> out(utf8.size() + 1, 0);
  for (std::size_t b = 0, c = 0; b <= utf8.size(); ++b) {
    out[b] = c;
    if (b < utf8.size() && (static_cast<unsigned char>(utf8[b]) & 0xC0) != 0x80) ++c;
  }
  return out;
}

std::u32string python_lower(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char32_t c = text[i];
    if (c < 0x80) {
      out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
    } else if (c == 0x130) {
      out.push_back(U'i');
      out.push_back(0x307);
    } else if (c == 0x3A3) {
      out.push_back(final_sigma(text, i) ? 0x3C2 : 0x3C3);
    } else {
      out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    }
  }
  return out;
}

static std::u32string normalize(std::u32string_view text, utf8proc_option_t options) {
  std::string utf8 = encode(text);
  utf8proc_uint8_t* result = nullptr;
  auto len = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()),
                          static_cast<utf8proc_ssize_t>(utf8.size()), &result,
                          static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  if (len < 0) throw Error(std::string("Unicode normalisation failed: ") + utf8proc_errmsg(len));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> guard(result, &std::free);
  return decode(std::string_view(reinterpret_cast<const char*>(result), static_cast<std::size_t>(len)));
}

std::u32string nfc(std::u32string_view text) {
  for (char32_t c : text)  // ASCII is already NFC: skip the round trip for the common case
    if (c >= 0x80) return normalize(text, UTF8PROC_COMPOSE);
  return std::u32string(text);
}

std::u32string nfd(std::u32string_view text) {
  for (char32_t c : text)
    if (c >= 0x80) return normalize(text, UTF8PROC_DECOMPOSE);
  return std::u32string(text);
}

std::u32string nfkc(std::u32string_view text) {
  for (char32_t c : text)
    if (c >= 0x80) return normalize(text, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
  return std::u32string(text);
}

std::u32string nfkd(std::u32string_view text) {
  for (char32_t c : text)
    if (c >= 0x80) return normalize(text, static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT));
  return std::u32string(text);
}

std::u32string lower_each_char(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (c == 0x130) {  // the one unconditional multi-character lowercase mapping
      out.push_back(U'i');
      out.push_back(0x307);
    } else if (c < 0x80) {
      out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
    } else {
      out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    }
  }
  return out;
}

bool is_control(char32_t c) {
  if (c == U'\t' || c == U'\n' || c == U'\r') return false;
  return category(c)[0] == 'C';
}

bool is_whitespace(char32_t c) {
  if (c == U' ' || c == U'\t' || c == U'\n' || c == U'\r') return true;
  return utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_ZS;
}

bool is_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
    return true;
  return category(c)[0] == 'P';
}

bool is_cjk(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_python_space(char32_t c) {
  switch (c) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x1C: case 0x1D: case 0x1E:
    case 0x1F: case 0x20: case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

bool is_rust_whitespace(char32_t c) {
  switch (c) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

bool is_cjk_tokenizers(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_rust_word(char32_t c) {
  // Alphabetic = L*, Nl and Other_Alphabetic: beyond the marks, the circled and squared Latin letters (So)
  if ((c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
      (c >= 0x1F170 && c <= 0x1F189) || c == 0x200C || c == 0x200D)
    return true;
  const char* cat = category(c);
  return cat[0] == 'L' || cat[0] == 'M' || (cat[0] == 'N' && (cat[1] == 'd' || cat[1] == 'l')) ||
         (cat[0] == 'P' && cat[1] == 'c');
}

bool is_nonspacing_mark(char32_t c) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_MN;
}

}  // namespace attnscan::unicode
