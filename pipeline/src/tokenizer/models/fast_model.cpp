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
  for (int32_t id = 0; id < static_cast<int32_t>(p_->vocab.size()); ++id) {
    const std::string& piece = p_->vocab.token(id);
    if (piece.empty() || p_->vocab.find(piece) != id) continue;  // a repeated piece: tokenizers keeps the last id
    pieces_.insert(piece, id);
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
  auto score = [&](int32_t id, std::size_t) -> std::optional<double> { return p_->scores[static_cast<std::size_t>(id)]; };
  const std::vector<UnigramSpan> path =
      unigram_best_path<double>(s, pieces_, score, p_->unigram_unk, min_score_ - kUnkPenalty);
  if (path.empty() && !s.empty())
    throw Error("Unigram: no piece covers part of '" + s + "' and the model has no unk_id");
  std::vector<std::string> pieces;  // consecutive unknown spans fused (fuse_unk)
  bool unknown_last = false;
  for (const auto& span : path) {
    const bool unknown = p_->unigram_unk && span.id == *p_->unigram_unk;
    if (unknown && unknown_last) pieces.back() += s.substr(span.start, span.end - span.start);
    else pieces.push_back(s.substr(span.start, span.end - span.start));
    unknown_last = unknown;
  }
  for (const auto& piece : pieces) {
    int32_t id = p_->vocab.find(piece);  // tokenizers looks each piece string up again
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
