// Byte-level BPE: the merges (shared) and the slow RobertaTokenizer.
#include <algorithm>
#include <limits>

#include "tokenizer/pre_tokenizers/byte_level.hpp"
#include "tokenizer/processors/trim_offsets.hpp"
#include "tokenizer/models/subword_model.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

int32_t BpeMerges::intern(const std::string& symbol) {
  const auto [it, added] = symbol_ids_.emplace(symbol, static_cast<int32_t>(symbols_.size()));
  if (added) symbols_.push_back(symbol);
  return it->second;
}

BpeMerges::BpeMerges(const std::vector<std::pair<std::string, std::string>>& merges) {
  merges_.reserve(merges.size());
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const auto& [left, right] = merges[i];
    const int32_t l = intern(left), r = intern(right);
    merges_[pair_key(l, r)] = Merge{static_cast<int32_t>(i), intern(left + right)};  // a repeated pair: the later rank
  }
}

void BpeMerges::merge(std::vector<std::string>& word) const {
  if (word.size() < 2) return;
  // ids[i] >= 0: an interned symbol; -1 - k: word[k], a symbol no merge reads (it stays as it is)
  std::vector<int32_t> ids(word.size());
  for (std::size_t i = 0; i < word.size(); ++i) {
    const auto it = symbol_ids_.find(word[i]);
    ids[i] = it == symbol_ids_.end() ? -1 - static_cast<int32_t>(i) : it->second;
  }
  auto merge_at = [&](std::size_t i) -> const Merge* {
    if (ids[i] < 0 || ids[i + 1] < 0) return nullptr;
    const auto it = merges_.find(pair_key(ids[i], ids[i + 1]));
    return it == merges_.end() ? nullptr : &it->second;
  };
  std::vector<int32_t> merged;
  while (ids.size() > 1) {
    const Merge* best = nullptr;
    std::size_t at = 0;  // the first pair of the lowest rank
    for (std::size_t i = 0; i + 1 < ids.size(); ++i) {
      const Merge* m = merge_at(i);
      if (m && (!best || m->rank < best->rank)) best = m, at = i;
    }
    if (!best) break;
    const int32_t first = ids[at], second = ids[at + 1], result = best->result;
    merged.clear();
    for (std::size_t i = 0; i < ids.size();) {  // every occurrence, left to right
      const bool pair = i + 1 < ids.size() && ids[i] == first && ids[i + 1] == second;
      merged.push_back(pair ? result : ids[i]);
      i += pair ? 2 : 1;
    }
    ids.swap(merged);
  }
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (const int32_t id : ids)
    out.push_back(id >= 0 ? symbols_[static_cast<std::size_t>(id)] : std::move(word[static_cast<std::size_t>(-1 - id)]));
  word.swap(out);
}

RobertaSlowModel::RobertaSlowModel(Vocab vocab, BpeMerges merges, std::vector<SlowAddedToken> added, int32_t unk_id,
                                   bool add_prefix_space)
    : vocab_(std::move(vocab)),
      merges_(std::move(merges)),
      added_(with_patterns(std::move(added))),
      unk_id_(unk_id),
      add_prefix_space_(add_prefix_space) {}

SentenceTokens RobertaSlowModel::tokenize(std::string_view text_utf8) const {
  const std::u32string sentence = unicode::decode(text_utf8);
  NormalizedText text(sentence);
  // prepare_for_tokenization: a space before text that does not start with one
  if (add_prefix_space_ && !text.empty() && !unicode::is_python_space(text.text()[0])) text.prepend(U" ");
  SentenceTokens out;
  for (const auto& chunk : split_slow_added(text, added_)) {
    if (chunk.added >= 0) {
      const auto& a = added_[static_cast<std::size_t>(chunk.added)];
      push_added(out, a.content, a.id, a.special, chunk.text.original(0, chunk.text.size()));
      continue;
    }
    for (const auto& [b, e] : gpt2_split(chunk.text.text())) {
      NormalizedText word = chunk.text.slice(b, e);
      const std::string utf8 = unicode::encode(word.text());
      to_byte_chars(word);
      std::vector<std::string> symbols;
      for (char32_t c : word.text()) symbols.push_back(unicode::encode(std::u32string_view(&c, 1)));
      merges_.merge(symbols);
      const auto word_idx = static_cast<int32_t>(out.words.size());
      std::size_t at = 0;  // byte characters passed
      for (auto& piece : symbols) {
        const std::size_t n = unicode::char_count(piece);
        const CharSpan span = word.original(at, at + n);
        at += n;
        int32_t id = -1;
        for (const auto& a : added_)  // convert_tokens_to_ids: the added tokens first
          if (a.content == piece) id = a.id;
        if (id < 0) id = vocab_.find(piece);
        if (id < 0) id = unk_id_;
        const bool unknown = id == unk_id_ && vocab_.find(piece) < 0 && unk_id_ >= 0 &&
                             unk_id_ < static_cast<int32_t>(vocab_.size());
        out.push(id, unknown ? vocab_.token(unk_id_) : std::move(piece), word_idx, false, span);
      }
      std::size_t lead = 0;
      while (lead < utf8.size() && utf8[lead] == ' ') ++lead;
      out.words.push_back(lead == utf8.size() ? utf8 : utf8.substr(lead));
    }
  }
  trim_offsets(out, sentence, add_prefix_space_);
  return out;
}

}  // namespace attnscan::detail
