// tokenizer.json's added tokens split out of a sentence (the `tokenizers` crate's AddedVocabulary).
#include "tokenizer/fast_text.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

// Leftmost-longest matches of `tokens` (those with normalized == want_normalized) in `text`, as the
// aho-corasick automaton of tokenizers' AddedVocabulary finds them, with lstrip/rstrip applied.
struct Match {
  std::size_t start, stop;
  int added;
};

std::vector<Match> find_added(const FastPipeline& p, const std::u32string& text, bool normalized) {
  std::vector<Match> out;
  std::size_t i = 0, last_stop = 0;
  while (i < text.size()) {
    int hit = -1;
    std::size_t hit_len = 0;
    for (std::size_t k = 0; k < p.added.size(); ++k) {
      const auto& t = p.added[k];
      if (t.normalized != normalized || t.pattern.empty() || t.pattern.size() <= hit_len) continue;
      if (text.compare(i, t.pattern.size(), t.pattern) == 0) {
        hit = static_cast<int>(k);
        hit_len = t.pattern.size();
      }
    }
    if (hit < 0) {
      ++i;
      continue;
    }
    const auto& t = p.added[static_cast<std::size_t>(hit)];
    std::size_t start = i, stop = i + hit_len;
    if (t.lstrip)
      while (start > last_stop && unicode::is_rust_whitespace(text[start - 1])) --start;
    if (t.rstrip)
      while (stop < text.size() && unicode::is_rust_whitespace(text[stop])) ++stop;
    out.push_back({start, stop, hit});
    last_stop = stop;
    i = stop;
  }
  return out;
}

void split_by(const FastPipeline& p, const std::u32string& text, bool normalized, std::vector<TextPiece>& out) {
  std::size_t pos = 0;
  auto gap = [&](std::size_t end) {
    if (end <= pos) return;
    std::u32string piece = text.substr(pos, end - pos);
    if (normalized) {
      out.push_back({-1, std::move(piece)});
    } else {  // normalize the gap, then look for the normalized added tokens in it
      split_by(p, normalize(p.normalizers, std::move(piece)), true, out);
    }
  };
  for (const auto& m : find_added(p, text, normalized)) {
    gap(m.start);
    out.push_back({m.added, {}});
    pos = m.stop;
  }
  gap(text.size());
}

}  // namespace

std::vector<TextPiece> split_added_tokens(const FastPipeline& p, const std::u32string& raw) {
  std::vector<TextPiece> out;
  split_by(p, raw, false, out);
  return out;
}


}  // namespace attnscan::detail
