// Byte-level BPE: the merges (shared) and the slow RobertaTokenizer.
#include <algorithm>
#include <limits>

#include "tokenizer/pre_tokenizers/byte_level.hpp"
#include "tokenizer/processors/trim_offsets.hpp"
#include "tokenizer/models/subword_model.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

std::string pair_key(const std::string& a, const std::string& b) {
  std::string k;
  k.reserve(a.size() + b.size() + 1);
  k += a;
  k += '\x01';
  k += b;
  return k;
}

}  // namespace

BpeMerges::BpeMerges(const std::vector<std::pair<std::string, std::string>>& merges) {
  ranks_.reserve(merges.size());
  for (std::size_t i = 0; i < merges.size(); ++i)
    ranks_[pair_key(merges[i].first, merges[i].second)] = static_cast<int32_t>(i);  // a repeated pair: the later rank
}

void BpeMerges::merge(std::vector<std::string>& word) const {
  std::vector<int32_t> rank;  // rank[i]: of the pair (word[i], word[i + 1])
  auto rank_of = [&](std::size_t i) {
    auto it = ranks_.find(pair_key(word[i], word[i + 1]));
    return it == ranks_.end() ? std::numeric_limits<int32_t>::max() : it->second;
  };
  while (word.size() > 1) {
    rank.resize(word.size() - 1);
    int32_t best = std::numeric_limits<int32_t>::max();
    for (std::size_t i = 0; i + 1 < word.size(); ++i) {
      rank[i] = rank_of(i);
      best = std::min(best, rank[i]);
    }
    if (best == std::numeric_limits<int32_t>::max()) break;
    const auto at = static_cast<std::size_t>(std::find(rank.begin(), rank.end(), best) - rank.begin());
    const std::string first = word[at], second = word[at + 1];
    std::vector<std::string> merged;
    merged.reserve(word.size());
    for (std::size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && word[i] == first && word[i + 1] == second) {
        merged.push_back(first + second);
        i += 2;
      } else {
        merged.push_back(std::move(word[i]));
        ++i;
      }
    }
    word.swap(merged);
  }
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
