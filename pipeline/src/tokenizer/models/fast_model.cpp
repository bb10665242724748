// tokenizer.json with a BPE, Unigram or WordLevel model: the `tokenizers` crate's pipeline.
#include <limits>

#include "common/error.hpp"
#include "tokenizer/pre_tokenizers/byte_level.hpp"
#include "tokenizer/fast_text.hpp"
#include "tokenizer/models/subword_model.hpp"
#include "tokenizer/files/tokenizer_json.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {
constexpr double kUnkPenalty = 10.0;  // tokenizers' K_UNK_PENALTY
}

FastSubwordModel::FastSubwordModel(std::shared_ptr<const FastPipeline> p) : p_(std::move(p)) {
  if (p_->model == SubwordKind::ByteLevelBpe) {
    merges_ = BpeMerges(p_->merges);
    return;
  }
  node_piece_.push_back(-1);  // the root
  for (int32_t id = 0; id < static_cast<int32_t>(p_->vocab.size()); ++id) {
    const std::string& piece = p_->vocab.token(id);
    if (piece.empty() || p_->vocab.find(piece) != id) continue;  // a repeated piece: tokenizers keeps the last id
    uint64_t node = 0;
    for (unsigned char c : piece) {
      auto [it, added] = edges_.emplace((node << 8) | c, static_cast<int32_t>(node_piece_.size()));
      if (added) node_piece_.push_back(-1);
      node = static_cast<uint64_t>(it->second);
    }
    node_piece_[node] = id;
  }
  min_score_ = std::numeric_limits<double>::max();
  for (double s : p_->scores) min_score_ = std::min(min_score_, s);
}

void FastSubwordModel::bpe(const std::u32string& word, int32_t word_idx, SentenceTokens& out) const {
  const auto& vocab = p_->vocab;
  std::string whole;
  std::vector<std::string> symbols;
  for (char32_t c : word) {
    std::string s = unicode::encode(std::u32string_view(&c, 1));
    whole += s;
    if (vocab.find(s) >= 0) {
      symbols.push_back(std::move(s));
    } else if (p_->bpe_unk) {  // unknown character: the unk token (consecutive ones fused with fuse_unk)
      if (!(p_->fuse_unk && !symbols.empty() && symbols.back() == "\x01unk")) symbols.push_back("\x01unk");
    }  // no unk token: the character is dropped, as tokenizers does
  }
  if (p_->ignore_merges && vocab.find(whole) >= 0) symbols = {whole};
  else merges_.merge(symbols);
  for (auto& s : symbols) {
    const bool unk = s == "\x01unk";
    const int32_t id = unk ? vocab.find(*p_->bpe_unk) : vocab.find(s);
    out.ids.push_back(id);
    out.pieces.push_back(unk ? *p_->bpe_unk : std::move(s));
    out.word_index.push_back(word_idx);
    out.special.push_back(0);
  }
}

// tokenizers' Unigram::encode_optimized: Viterbi over the UTF-8 bytes, the first best path kept on
// ties, an unknown character scored min_score - 10 when no one-character piece covers it, unknown
// pieces fused.
void FastSubwordModel::unigram(const std::u32string& word, int32_t word_idx, SentenceTokens& out) const {
  const std::string s = unicode::encode(word);
  const std::size_t n = s.size();
  struct Node {
    int32_t id = -1;
    double score = 0;
    std::size_t start = std::numeric_limits<std::size_t>::max();
  };
  std::vector<Node> best(n + 1);
  const double unk_score = min_score_ - kUnkPenalty;
  auto char_len = [](unsigned char c) -> std::size_t { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; };
  for (std::size_t start = 0; start < n;) {
    const double here = best[start].score;
    const std::size_t mblen = std::min(char_len(static_cast<unsigned char>(s[start])), n - start);
    bool single = false;
    uint64_t node = 0;
    for (std::size_t k = start; k < n; ++k) {
      auto it = edges_.find((node << 8) | static_cast<unsigned char>(s[k]));
      if (it == edges_.end()) break;
      node = static_cast<uint64_t>(it->second);
      const int32_t id = node_piece_[node];
      if (id < 0) continue;
      const std::size_t end = k + 1;
      const double candidate = p_->scores[static_cast<std::size_t>(id)] + here;
      Node& target = best[end];
      if (target.start == std::numeric_limits<std::size_t>::max() || candidate > target.score) {
        target = {id, candidate, start};
      }
      if (end - start == mblen) single = true;
    }
    if (!single && p_->unigram_unk) {
      Node& target = best[start + mblen];
      const double candidate = unk_score + here;
      if (target.start == std::numeric_limits<std::size_t>::max() || candidate > target.score)
        target = {*p_->unigram_unk, candidate, start};
    }
    start += mblen;
  }
  std::vector<std::string> pieces;  // backwards; consecutive unknown spans fused (fuse_unk)
  std::string unknown;               // the unknown spans being fused, backwards
  for (std::size_t end = n; end > 0;) {
    const Node& node = best[end];
    if (node.start == std::numeric_limits<std::size_t>::max())
      throw Error("Unigram: no piece covers byte " + std::to_string(end) + " and the model has no unk_id");
    if (p_->unigram_unk && node.id == *p_->unigram_unk) {
      unknown.insert(0, s, node.start, end - node.start);
    } else {
      if (!unknown.empty()) pieces.push_back(std::move(unknown));
      unknown.clear();
      pieces.push_back(s.substr(node.start, end - node.start));
    }
    end = node.start;
  }
  if (!unknown.empty()) pieces.push_back(std::move(unknown));
  for (std::size_t k = pieces.size(); k-- > 0;) {
    int32_t id = p_->vocab.find(pieces[k]);  // tokenizers looks each piece string up again
    if (id < 0) id = *p_->unigram_unk;
    out.ids.push_back(id);
    out.pieces.push_back(p_->vocab.token(id));
    out.word_index.push_back(word_idx);
    out.special.push_back(0);
  }
}

SentenceTokens FastSubwordModel::tokenize(std::string_view text) const {
  SentenceTokens out;
  bool at_start = true;
  for (const auto& piece : split_added_tokens(*p_, unicode::decode(text))) {
    if (piece.added >= 0) {
      const auto& a = p_->added[static_cast<std::size_t>(piece.added)];
      push_added(out, a.content, a.id, a.special);
      at_start = false;
      continue;
    }
    for (const auto& w : pre_tokenize(p_->pre_tokenizers, piece.text, at_start)) {
      const auto word = static_cast<int32_t>(out.words.size());
      if (p_->model == SubwordKind::ByteLevelBpe) bpe(w, word, out);
      else if (p_->model == SubwordKind::WordLevel) word_level(w, word, out);
      else unigram(w, word, out);
      std::string text_of_word;
      if (p_->byte_level) {
        text_of_word = chars_to_bytes(w);
        std::size_t lead = 0;
        while (lead < text_of_word.size() && text_of_word[lead] == ' ') ++lead;
        if (lead < text_of_word.size()) text_of_word.erase(0, lead);
      } else if (p_->model == SubwordKind::Unigram) {
        std::u32string t;
        for (char32_t c : w)
          if (c != U'\u2581') t.push_back(c);
        text_of_word = unicode::encode(t.empty() ? w : t);
      } else {
        text_of_word = unicode::encode(w);
      }
      out.words.push_back(std::move(text_of_word));
    }
    at_start = false;
  }
  return out;
}

}  // namespace attnscan::detail
