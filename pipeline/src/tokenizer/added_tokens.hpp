#pragma once
// The one added-token matcher of every file kind: where added (and special) tokens written in a
// text stand, leftmost-longest as transformers' tokens trie and tokenizers' aho-corasick automaton
// find them, each widened over the whitespace its lstrip (before it, never past the previous match)
// and rstrip (after it) take. The whitespace is the library's own: Python's str.isspace() for the slow
// tokenizers, Rust's char::is_whitespace for tokenizer.json (unicode_text.hpp). single_word, where
// `is_word` is given, is the `tokenizers` crate's: a match beside a word character (regex \w) is dropped
// and the search goes on after it; transformers' other meaning is split_slow_added's.
#include <cstddef>
#include <string>
#include <vector>

namespace attnscan::detail {

struct AddedMatch {
  std::size_t start = 0, stop = 0;              // [start, stop) of the text, the stripped whitespace included
  std::size_t token_start = 0, token_stop = 0;  // the token's own characters
  int token = -1;                               // index into the tokens given
};

// `tokens[k]` has .lstrip, .rstrip and .single_word; `pattern(k)` gives its text, or nullptr to leave
// token k out (tokenizer.json matches normalized and raw tokens in separate passes). Empty patterns
// never match.
template <typename Tokens, typename Pattern>
std::vector<AddedMatch> match_added(const std::u32string& text, const Tokens& tokens, Pattern&& pattern,
                                    bool (*is_space)(char32_t), bool (*is_word)(char32_t) = nullptr) {
  std::vector<AddedMatch> out;
  std::size_t i = 0, last_stop = 0;
  while (i < text.size()) {
    int hit = -1;
    std::size_t hit_len = 0;
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      const std::u32string* p = pattern(k);
      if (!p || p->empty() || p->size() <= hit_len || (*p)[0] != text[i]) continue;
      if (text.compare(i, p->size(), *p) == 0) {
        hit = static_cast<int>(k);
        hit_len = p->size();
      }
    }
    if (hit < 0) {
      ++i;
      continue;
    }
    const auto& t = tokens[static_cast<std::size_t>(hit)];
    if (is_word && t.single_word &&
        ((i > 0 && is_word(text[i - 1])) || (i + hit_len < text.size() && is_word(text[i + hit_len])))) {
      i += hit_len;
      continue;
    }
    std::size_t start = i, stop = i + hit_len;
    if (t.lstrip)
      while (start > last_stop && is_space(text[start - 1])) --start;
    if (t.rstrip)
      while (stop < text.size() && is_space(text[stop])) ++stop;
    out.push_back({start, stop, i, i + hit_len, hit});
    last_stop = i = stop;
  }
  return out;
}

}  // namespace attnscan::detail
