#include "tokenizer/models/subword_model.hpp"

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
  std::vector<SlowChunk> chunks;
  std::size_t pos = 0, i = 0;
  while (i < text.size()) {
    int hit = -1;
    for (std::size_t k = 0; k < patterns.size(); ++k) {
      const auto& p = patterns[k];
      if (p.empty() || (hit >= 0 && p.size() <= patterns[static_cast<std::size_t>(hit)].size())) continue;
      if (text.compare(i, p.size(), p) == 0) hit = static_cast<int>(k);
    }
    if (hit < 0) {
      ++i;
      continue;
    }
    if (i > pos) chunks.push_back({-1, text.substr(pos, i - pos)});
    chunks.push_back({hit, {}});
    i += patterns[static_cast<std::size_t>(hit)].size();
    pos = i;
  }
  if (pos < text.size()) chunks.push_back({-1, text.substr(pos)});
  // lstrip: the text before loses its trailing whitespace; rstrip: the text after its leading one
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    if (chunks[k].added < 0) continue;
    const auto& t = tokens[static_cast<std::size_t>(chunks[k].added)];
    if (t.rstrip && k + 1 < chunks.size() && chunks[k + 1].added < 0) {
      auto& r = chunks[k + 1].text;
      std::size_t b = 0;
      while (b < r.size() && unicode::is_python_space(r[b])) ++b;
      r.erase(0, b);
    }
    if (t.lstrip && k > 0 && chunks[k - 1].added < 0) {
      auto& l = chunks[k - 1].text;
      while (!l.empty() && unicode::is_python_space(l.back())) l.pop_back();
    }
  }
  std::vector<SlowChunk> out;
  for (auto& c : chunks)
    if (c.added >= 0 || !c.text.empty()) out.push_back(std::move(c));
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
