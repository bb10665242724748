// tokenizer.json's added tokens split out of a sentence (the `tokenizers` crate's AddedVocabulary):
// the tokens matched on the raw text first, the gaps normalized, then the normalized tokens matched.
#include "tokenizer/added_tokens.hpp"
#include "tokenizer/fast_text.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

// The matches of the tokens with normalized == `normalized` (added_tokens.hpp).
std::vector<AddedMatch> find_added(const FastPipeline& p, const std::u32string& text, bool normalized) {
  auto pattern = [&](std::size_t k) { return p.added[k].normalized == normalized ? &p.added[k].pattern : nullptr; };
  return match_added(text, p.added, pattern, unicode::is_rust_whitespace, unicode::is_rust_word);
}

// Every piece, matched or not, is a slice (the crate's split_with_indices), so its origin is recomputed.
void split_by(const FastPipeline& p, NormalizedText text, bool normalized, std::vector<TextPiece>& out) {
  std::size_t pos = 0;
  auto gap = [&](std::size_t end) {
    if (end <= pos) return;
    NormalizedText piece = end == text.size() ? std::move(text).slice(pos, end) : text.slice(pos, end);
    if (normalized) {
      out.push_back({-1, std::move(piece)});
    } else {  // normalize the gap, then look for the normalized added tokens in it
      detail::normalize(p.normalizers, piece);
      split_by(p, piece, true, out);
    }
  };
  for (const auto& m : find_added(p, text.text(), normalized)) {
    gap(m.start);
    out.push_back({m.token, text.slice(m.start, m.stop)});
    pos = m.stop;
  }
  gap(text.size());
}

}  // namespace

std::vector<TextPiece> split_added_tokens(const FastPipeline& p, const std::u32string& raw) {
  std::vector<TextPiece> out;
  split_by(p, NormalizedText(raw), false, out);
  return out;
}

}  // namespace attnscan::detail
