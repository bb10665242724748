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

std::u32string lower_except(const std::u32string& text, const std::vector<std::string>& keep) {
  std::vector<std::u32string> keep32;
  for (const auto& k : keep)
    if (!k.empty()) keep32.push_back(unicode::decode(k));
  std::u32string lowered;
  lowered.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::u32string* hit = nullptr;
    for (const auto& k : keep32)
      if (text.compare(i, k.size(), k) == 0 && (!hit || k.size() > hit->size())) hit = &k;
    if (hit) {
      lowered += *hit;
      i += hit->size();
    } else {
      lowered += unicode::python_lower(std::u32string_view(&text[i], 1));
      ++i;
    }
  }
  return lowered;
}

std::vector<SlowChunk> split_slow_added(const std::u32string& text, const std::vector<SlowAddedToken>& tokens) {
  std::vector<std::u32string> patterns;
  patterns.reserve(tokens.size());
  for (const auto& t : tokens) patterns.push_back(unicode::decode(t.content));
  // lstrip: the text before loses its trailing whitespace (str.rstrip()); rstrip: the text after its
  // leading one; text chunks left empty are dropped.
  std::vector<SlowChunk> out;
  std::size_t pos = 0;
  for (const auto& m : match_added(text, tokens, [&](std::size_t k) { return &patterns[k]; }, unicode::is_python_space)) {
    if (m.start > pos) out.push_back({-1, text.substr(pos, m.start - pos)});
    out.push_back({m.token, {}});
    pos = m.stop;
  }
  if (pos < text.size()) out.push_back({-1, text.substr(pos)});
  return out;
}

void push_added(SentenceTokens& out, const std::string& content, int32_t id, bool special) {
  out.ids.push_back(id);
  out.pieces.push_back(content);
  out.word_index.push_back(static_cast<int32_t>(out.words.size()));
  out.special.push_back(special ? 1 : 0);
  out.words.push_back(content);
}

}  // namespace attnscan::detail
