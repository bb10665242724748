#include "tokenizer/models/subword_model.hpp"

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

std::vector<SlowChunk> split_slow_added(const NormalizedText& text, const std::vector<SlowAddedToken>& tokens) {
  std::vector<std::u32string> patterns;
  patterns.reserve(tokens.size());
  for (const auto& t : tokens) patterns.push_back(unicode::decode(t.content));
  // lstrip: the text before loses its trailing whitespace (str.rstrip()); rstrip: the text after its
  // leading one; text chunks left empty are dropped.
  std::vector<SlowChunk> out;
  std::size_t pos = 0;
  for (const auto& m : match_added(text.text(), tokens, [&](std::size_t k) { return &patterns[k]; }, unicode::is_python_space)) {
    if (m.start > pos) out.push_back({-1, text.slice(pos, m.start)});
    out.push_back({m.token, text.slice(m.start, m.stop)});
    pos = m.stop;
  }
  if (pos < text.size()) out.push_back({-1, text.slice(pos, text.size())});
  return out;
}

void push_added(SentenceTokens& out, const std::string& content, int32_t id, bool special, CharSpan span) {
  out.push(id, content, static_cast<int32_t>(out.words.size()), special, span);
  out.words.push_back(content);
}

}  // namespace attnscan::detail
