// tokenizer.json with a BPE, Unigram or WordLevel model: the `tokenizers` crate's pipeline.
#include <algorithm>
#include <limits>
#include <optional>

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
  if (p_->model == SubwordKind::ByteLevelBpe || p_->model == SubwordKind::Bpe) {
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

namespace {

// byte_fallback's token of one byte: "<0x0A>" (Rust's `<{b:#04X}>`).
std::string byte_token(unsigned char b) {
  static const char* hex = "0123456789ABCDEF";
  return std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
}

// A symbol BPE starts from and the characters [first, last] of the word behind it.
struct BpeUnit {
  std::string symbol;
  std::size_t first, last;
};

const std::string kUnkSymbol = "\x01unk";  // an unknown character's symbol (no merge reads it)

}  // namespace

// BPE over the word's characters (GPT-2's byte characters for byte-level BPE), as the crate's
// BPE::merge_word: a character outside the vocab becomes its bytes' <0xNN> tokens (byte_fallback, when
// the vocab has all of them), else the unk token (consecutive ones fused with fuse_unk), else it is
// dropped. A symbol covers the characters it was merged from; a byte token covers its whole character.
void FastSubwordModel::bpe(const NormalizedText& word, int32_t word_idx, SentenceTokens& out) const {
  const auto& vocab = p_->vocab;
  const std::u32string& text = word.text();
  std::vector<BpeUnit> units;
  std::optional<BpeUnit> unk;  // an unknown run not yet added (the crate adds it before the next known character)
  std::string whole;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char bytes[4];
    const std::size_t n = unicode::encode_char(text[i], bytes);
    std::string s(bytes, n);
    whole += s;
    if (vocab.find(s) >= 0) {
      if (unk) units.push_back(std::move(*unk)), unk.reset();
      units.push_back({std::move(s), i, i});
      continue;
    }
    if (p_->byte_fallback) {
      std::vector<std::string> tokens;
      for (std::size_t k = 0; k < n; ++k) tokens.push_back(byte_token(static_cast<unsigned char>(bytes[k])));
      if (std::all_of(tokens.begin(), tokens.end(), [&](const std::string& t) { return vocab.find(t) >= 0; })) {
        for (auto& t : tokens) units.push_back({std::move(t), i, i});
        continue;
      }
    }
    if (!p_->bpe_unk) continue;  // no unk token: the character is dropped, as tokenizers does
    if (unk && p_->fuse_unk) {
      unk->last = i;
    } else {
      if (unk) units.push_back(std::move(*unk));
      unk = BpeUnit{kUnkSymbol, i, i};
    }
  }
  if (unk) units.push_back(std::move(*unk));
  std::vector<std::string> symbols;
  if (p_->ignore_merges && vocab.find(whole) >= 0 && !text.empty()) {
    symbols = {whole};  // every character of the word
    units = {{whole, 0, text.size() - 1}};
  } else {
    for (const auto& u : units) symbols.push_back(u.symbol);
    merges_.merge(symbols);
  }
  std::size_t at = 0;  // units passed: a merged symbol is the concatenation of the next ones
  for (auto& s : symbols) {
    const std::size_t first = at;
    for (std::size_t bytes = 0; bytes < s.size() && at < units.size(); ++at) bytes += units[at].symbol.size();
    const CharSpan span = word.original(units[first].first, units[at - 1].last + 1);
    const bool is_unk = s == kUnkSymbol;
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
      if (p_->model == SubwordKind::ByteLevelBpe || p_->model == SubwordKind::Bpe) bpe(w, word, out);
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
      } else if (p_->model == SubwordKind::Bpe) {  // "▁" as the space it stands for, none leading
        std::u32string t = w.text();
        for (char32_t& c : t)
          if (c == U'\u2581') c = U' ';
        const auto lead = t.find_first_not_of(U' ');
        text_of_word = unicode::encode(lead == std::u32string::npos ? w.text() : t.substr(lead));
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
