// tokenizer.json with a BPE, Unigram or WordLevel model: the `tokenizers` crate's pipeline.
#include <limits>
#include <numeric>

#include "common/error.hpp"
#include "tokenizer/pre_tokenizers/byte_level.hpp"
#include "tokenizer/processors/trim_offsets.hpp"
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

// BPE over the word's characters; a symbol covers the characters it was merged from.
void FastSubwordModel::bpe(const NormalizedText& word, int32_t word_idx, SentenceTokens& out) const {
  const auto& vocab = p_->vocab;
  std::string whole;
  std::vector<std::string> symbols;
  std::vector<std::size_t> kept;       // the characters behind the symbols, in order
  std::vector<std::size_t> unk_chars;  // how many characters each unknown symbol stands for
  const std::u32string& text = word.text();
  for (std::size_t i = 0; i < text.size(); ++i) {
    char bytes[4];
    std::string s(bytes, unicode::encode_char(text[i], bytes));
    whole += s;
    if (vocab.find(s) >= 0) {
      symbols.push_back(std::move(s));
    } else if (p_->bpe_unk) {  // unknown character: the unk token (consecutive ones fused with fuse_unk)
      if (p_->fuse_unk && !symbols.empty() && symbols.back() == "\x01unk") {
        ++unk_chars.back();
      } else {
        symbols.push_back("\x01unk");
        unk_chars.push_back(1);
      }
    } else {
      continue;  // no unk token: the character is dropped, as tokenizers does
    }
    kept.push_back(i);
  }
  if (p_->ignore_merges && vocab.find(whole) >= 0) {
    symbols = {whole};  // every character of the word
    kept.resize(text.size());
    std::iota(kept.begin(), kept.end(), std::size_t{0});
  } else {
    merges_.merge(symbols);
  }
  std::size_t at = 0, unk = 0;  // kept characters passed; unknown symbols passed
  for (auto& s : symbols) {
    const bool is_unk = s == "\x01unk";
    const std::size_t n = is_unk ? unk_chars[unk++] : unicode::char_count(s);
    const CharSpan span = word.original(kept[at], kept[at + n - 1] + 1);
    at += n;
    const int32_t id = is_unk ? vocab.find(*p_->bpe_unk) : vocab.find(s);
    out.push(id, is_unk ? *p_->bpe_unk : std::move(s), word_idx, false, span);
  }
}

// tokenizers' Unigram::encode_optimized: Viterbi over the UTF-8 bytes, the first best path kept on
// ties, an unknown character scored min_score - 10 when no one-character piece covers it, unknown
// pieces fused.
void FastSubwordModel::unigram(const NormalizedText& word, int32_t word_idx, SentenceTokens& out) const {
  const std::string s = unicode::encode(word.text());
  const std::vector<std::size_t> char_at = unicode::chars_before_bytes(s);
  auto score = [&](int32_t id, std::size_t) -> std::optional<double> { return p_->scores[static_cast<std::size_t>(id)]; };
  const std::vector<UnigramSpan> path =
      unigram_best_path<double>(s, pieces_, score, p_->unigram_unk, min_score_ - kUnkPenalty);
  if (path.empty() && !s.empty())
    throw Error("Unigram: no piece covers part of '" + s + "' and the model has no unk_id");
  std::vector<UnigramSpan> fused;  // consecutive unknown spans fused (fuse_unk)
  bool unknown_last = false;
  for (const auto& span : path) {
    const bool unknown = p_->unigram_unk && span.id == *p_->unigram_unk;
    if (unknown && unknown_last) fused.back().end = span.end;
    else fused.push_back(span);
    unknown_last = unknown;
  }
  for (const auto& span : fused) {
    int32_t id = span.id;  // a trie piece's id is its vocab id (the constructor keeps only those)
    if (p_->unigram_unk && id == *p_->unigram_unk) {  // tokenizers looks an unknown (fused) piece up again
      id = p_->vocab.find(std::string_view(s).substr(span.start, span.end - span.start));
      if (id < 0) id = *p_->unigram_unk;
    }
    out.push(id, p_->vocab.token(id), word_idx, false, word.original(char_at[span.start], char_at[span.end]));
  }
}

SentenceTokens FastSubwordModel::tokenize(std::string_view text_utf8) const {
  const std::u32string text = unicode::decode(text_utf8);
  SentenceTokens out;
  for (auto& piece : split_added_tokens(*p_, text)) {
    if (piece.added >= 0) {
      const auto& a = p_->added[static_cast<std::size_t>(piece.added)];
      push_added(out, a.content, a.id, a.special, piece.text.original(0, piece.text.size()));
      continue;
    }
    for (const auto& w : pre_tokenize(p_->pre_tokenizers, std::move(piece.text))) {
      const auto word = static_cast<int32_t>(out.words.size());
      if (p_->model == SubwordKind::ByteLevelBpe) bpe(w, word, out);
      else if (p_->model == SubwordKind::WordLevel) word_level(w, word, out);
      else unigram(w, word, out);
      std::string text_of_word;
      if (p_->byte_level) {
        text_of_word = chars_to_bytes(w.text());
        std::size_t lead = 0;
        while (lead < text_of_word.size() && text_of_word[lead] == ' ') ++lead;
        if (lead < text_of_word.size()) text_of_word.erase(0, lead);
      } else if (p_->model == SubwordKind::Unigram) {
        std::u32string t;
        for (char32_t c : w.text())
          if (c != U'\u2581') t.push_back(c);
        text_of_word = unicode::encode(t.empty() ? w.text() : t);
      } else {
        text_of_word = unicode::encode(w.text());
      }
      out.words.push_back(std::move(text_of_word));
    }
  }
  if (p_->trim_offsets) trim_offsets(out, text, p_->trim_prefix_space);
  return out;
}

}  // namespace attnscan::detail
