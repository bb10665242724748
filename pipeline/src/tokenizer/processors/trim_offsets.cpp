#include "tokenizer/processors/trim_offsets.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <tuple>

#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

bool space(char32_t c) { return c == U'\u0120' || unicode::is_rust_whitespace(c); }

// The character of valid UTF-8 `text` that starts at byte `pos`; `pos` moves past it.
char32_t char_at(const std::string& text, std::size_t& pos) {
  utf8proc_int32_t c = 0;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data()) + pos;
  pos += static_cast<std::size_t>(utf8proc_iterate(p, static_cast<utf8proc_ssize_t>(text.size() - pos), &c));
  return static_cast<char32_t>(c);
}

// The leading and trailing space characters of a piece's UTF-8 text, read from either end.
std::pair<int64_t, int64_t> spaces_around(const std::string& piece) {
  int64_t lead = 0, trail = 0;
  std::size_t begin = 0;
  while (begin < piece.size()) {
    std::size_t next = begin;
    if (!space(char_at(piece, next))) break;
    ++lead;
    begin = next;
  }
  if (begin == piece.size()) return {lead, lead};  // all spaces
  for (std::size_t end = piece.size(); end > begin;) {
    std::size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(piece[start]) & 0xC0) == 0x80) --start;
    std::size_t pos = start;
    if (!space(char_at(piece, pos))) break;
    ++trail;
    end = start;
  }
  return {lead, trail};
}

}  // namespace

void trim_offsets(SentenceTokens& out, const std::u32string& sentence, bool add_prefix_space) {
  for (std::size_t i = 0; i < out.ids.size(); ++i) {
    CharSpan& span = out.offsets[i];
    int64_t lead = 0, trail = 0;
    if (out.special[i] && span.start >= 0 && span.end <= static_cast<int64_t>(sentence.size())) {
      // an added token's text: the sentence's characters it matched
      const std::u32string_view value(sentence.data() + span.start, static_cast<std::size_t>(span.end - span.start));
      lead = std::find_if_not(value.begin(), value.end(), space) - value.begin();
      trail = std::find_if_not(value.rbegin(), value.rend(), space) - value.rbegin();
    } else {
      std::tie(lead, trail) = spaces_around(out.pieces[i]);
    }
    if (lead > 0 && !((i == 0 || span.start == 0) && add_prefix_space && lead == 1))
      span.start = std::min(span.start + lead, span.end);
    if (trail > 0 && span.end >= trail) span.end = std::max(span.end - trail, span.start);
  }
}

}  // namespace attnscan::detail
