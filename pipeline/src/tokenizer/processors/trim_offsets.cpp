#include "tokenizer/processors/trim_offsets.hpp"

#include <algorithm>

#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

void trim_offsets(SentenceTokens& out, const std::u32string& sentence, bool add_prefix_space) {
  auto space = [](char32_t c) { return c == U'\u0120' || unicode::is_rust_whitespace(c); };
  for (std::size_t i = 0; i < out.ids.size(); ++i) {
    CharSpan& span = out.offsets[i];
    std::u32string value;  // the token's text: an added token's is the sentence's characters it matched
    if (out.special[i] && span.start >= 0 && span.end <= static_cast<int64_t>(sentence.size()))
      value = sentence.substr(static_cast<std::size_t>(span.start), static_cast<std::size_t>(span.end - span.start));
    else
      value = unicode::decode(out.pieces[i]);
    const auto lead = static_cast<int64_t>(std::find_if_not(value.begin(), value.end(), space) - value.begin());
    const auto trail = static_cast<int64_t>(std::find_if_not(value.rbegin(), value.rend(), space) - value.rbegin());
    if (lead > 0 && !((i == 0 || span.start == 0) && add_prefix_space && lead == 1))
      span.start = std::min(span.start + lead, span.end);
    if (trail > 0 && span.end >= trail) span.end = std::max(span.end - trail, span.start);
  }
}

}  // namespace attnscan::detail
