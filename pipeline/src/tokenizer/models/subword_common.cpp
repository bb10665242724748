#include "tokenizer/models/subword_model.hpp"

#include <algorithm>

#include "tokenizer/added_tokens.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

std::vector<std::string> python_split_utf8(std::string_view text) {
  const std::u32string u = unicode::decode(text);
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < u.size()) {
    while (i < u.size() && unicode::is_python_space(u[i])) ++i;
    std::size_t j = i;
    while (j < u.size() && !unicode::is_python_space(u[j])) ++j;
    if (j > i) out.push_back(unicode::encode(std::u32string_view(u.data() + i, j - i)));
    i = j;
  }
  return out;
}

void lower_except(NormalizedText& text, const std::vector<std::string>& keep) {
  std::vector<std::u32string> keep32;
  for (const auto& k : keep)
    if (!k.empty()) keep32.push_back(unicode::decode(k));
  const std::u32string& t = text.text();
  std::vector<CharChange> changes;
  changes.reserve(t.size());
  for (std::size_t i = 0; i < t.size();) {
    const std::u32string* hit = nullptr;
    for (const auto& k : keep32)
      if (t.compare(i, k.size(), k) == 0 && (!hit || k.size() > hit->size())) hit = &k;
    if (hit) {
      for (char32_t c : *hit) changes.push_back({c, 0});
      i += hit->size();
      continue;
    }
    const std::u32string lowered = unicode::python_lower(std::u32string_view(&t[i], 1));
    for (std::size_t k = 0; k < lowered.size(); ++k) changes.push_back({lowered[k], k > 0 ? 1 : 0});
    ++i;
  }
  text.transform(changes);
}

namespace {

// One element of transformers' list of text and added-token strings. A token's `text` holds the
// whitespace its lstrip and rstrip took (for its span), `token` its own characters, and `before`/`after`
// that whitespace (which its single_word still sees).
struct SlowPart {
  int added = -1;
  NormalizedText text, token;
  std::u32string before, after;
  const NormalizedText& content() const { return added >= 0 ? token : text; }
};

// transformers' single_word, token by token: a token whose left neighbour (as it was before the token's
// lstrip) does not end with a space is appended to it (as stripped), else one whose right neighbour does
// not start with one is prepended to it; either way the joined string is text, and later tokens see it.
void join_single_words(std::vector<SlowPart>& parts, const std::vector<SlowAddedToken>& tokens) {
  for (std::size_t i = 0; i < parts.size(); ++i) {
    SlowPart& self = parts[i];
    if (self.added < 0 || !tokens[static_cast<std::size_t>(self.added)].single_word) continue;
    const std::u32string* left = i > 0 ? &parts[i - 1].content().text() : nullptr;
    const std::u32string* right = i + 1 < parts.size() ? &parts[i + 1].content().text() : nullptr;
    const char32_t left_end = !self.before.empty() ? self.before.back() : left && !left->empty() ? left->back() : 0;
    const char32_t right_start = !self.after.empty() ? self.after.front() : right && !right->empty() ? right->front() : 0;
    if (left_end && left_end != U' ') {
      NormalizedText joined = parts[i - 1].content();
      joined.append(self.token);
      parts[i - 1] = {-1, std::move(joined), {}, {}, {}};
      self = {};
    } else if (right_start && right_start != U' ') {
      SlowPart& next = parts[i + 1];
      NormalizedText joined = self.token;
      joined.append(next.content());
      if (next.added >= 0 && !next.after.empty() && i + 2 < parts.size()) {
        // a token joined before transformers reached it never strips: its rstrip's whitespace goes back
        NormalizedText ws = next.text.slice(next.text.size() - next.after.size(), next.text.size());
        ws.append(parts[i + 2].content());
        parts[i + 2] = {-1, std::move(ws), {}, {}, {}};
      }
      next = {-1, std::move(joined), {}, {}, {}};
      self = {};
    }
  }
}

}  // namespace

std::vector<SlowAddedToken> with_patterns(std::vector<SlowAddedToken> tokens) {
  for (auto& t : tokens) t.pattern = unicode::decode(t.content);
  return tokens;
}

std::vector<SlowChunk> split_slow_added(const NormalizedText& text, const std::vector<SlowAddedToken>& tokens) {
  // lstrip: the text before loses its trailing whitespace (str.rstrip()); rstrip: the text after its
  // leading one. A text stripped to nothing stays in the list as "" (as in transformers).
  std::vector<SlowPart> parts;
  std::size_t pos = 0, token_stop = 0;
  auto text_part = [&](std::size_t end, std::size_t raw_end) {
    if (raw_end > token_stop) parts.push_back({-1, text.slice(pos, std::max(pos, end)), {}, {}, {}});
  };
  const std::u32string& t = text.text();
  for (const auto& m : match_added(t, tokens, [&](std::size_t k) { return &tokens[k].pattern; }, unicode::is_python_space)) {
    text_part(m.start, m.token_start);
    parts.push_back({m.token, text.slice(m.start, m.stop), text.slice(m.token_start, m.token_stop),
                     t.substr(m.start, m.token_start - m.start), t.substr(m.token_stop, m.stop - m.token_stop)});
    pos = m.stop;
    token_stop = m.token_stop;
  }
  text_part(text.size(), text.size());
  join_single_words(parts, tokens);
  std::vector<SlowChunk> out;  // empty strings dropped
  for (auto& part : parts)
    if (!part.text.empty()) out.push_back({part.added, std::move(part.text)});
  return out;
}

void push_added(SentenceTokens& out, const std::string& content, int32_t id, bool special, CharSpan span) {
  out.push(id, content, static_cast<int32_t>(out.words.size()), special, span);
  out.words.push_back(content);
}

}  // namespace attnscan::detail
