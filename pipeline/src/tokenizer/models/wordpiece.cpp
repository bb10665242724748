#include <algorithm>

#include "common/error.hpp"
#include "tokenizer/fast_text.hpp"
#include "tokenizer/models/subword_model.hpp"
#include "tokenizer/files/tokenizer_json.hpp"
#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/processors/trim_offsets.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

bool is_special(const std::vector<std::string>& specials, const std::u32string& s) {
  const std::string utf8 = unicode::encode(s);
  for (const auto& t : specials)
    if (t == utf8) return true;
  return false;
}

// The slices of `text` between the characters `is_space` finds (str.split()); none empty.
template <typename IsSpace>
void split_removing(const NormalizedText& text, IsSpace&& is_space, std::vector<NormalizedText>& out) {
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && !is_space(text.text()[i])) continue;
    if (i > begin) out.push_back(text.slice(begin, i));
    begin = i + 1;
  }
}

}  // namespace

WordPieceModel::WordPieceModel(Vocab vocab, TokenizerConfig config, std::vector<SlowAddedToken> specials)
    : vocab_(std::move(vocab)), config_(std::move(config)), slow_specials_(with_patterns(std::move(specials))) {
  for (const auto& t : slow_specials_) {
    specials_.push_back(t.content);
    special_ids_[t.content] = t.id;
  }
  unk_id_ = vocab_.find(config_.unk_token);
  unk_token_ = config_.unk_token;
}

WordPieceModel::WordPieceModel(std::shared_ptr<const FastPipeline> fast) : fast_(std::move(fast)) {
  vocab_ = fast_->vocab;
  unk_id_ = fast_->vocab.find(fast_->unk_token);
  unk_token_ = fast_->unk_token;
  prefix_ = fast_->continuing_subword_prefix;
  max_chars_ = fast_->max_input_chars_per_word;
}

// transformers' BasicTokenizer: clean (controls removed, whitespace a space), CJK characters spaced,
// NFC, split on whitespace; each word not a special token lowercased and stripped of accents (NFD, Mn
// removed), then split at punctuation; " ".join re-split.
void WordPieceModel::basic_words(NormalizedText chunk, std::vector<NormalizedText>& out) const {
  clean_text(chunk, unicode::is_whitespace);
  if (config_.tokenize_chinese_chars) space_cjk(chunk, unicode::is_cjk);
  unicode_form(UnicodeForm::NFC, chunk);
  const bool strip = config_.strip_accents.value_or(config_.do_lower_case);
  std::vector<NormalizedText> tokens;
  split_removing(chunk, unicode::is_python_space, tokens);
  for (auto& token : tokens) {
    if (is_special(specials_, token.text())) {
      out.push_back(std::move(token));
      continue;
    }
    if (config_.do_lower_case) python_lowercase(token);
    if (strip) strip_nonspacing_marks(token);
    std::vector<NormalizedText> parts;
    std::size_t begin = 0;
    for (std::size_t i = 0; i < token.size(); ++i) {
      if (!unicode::is_punctuation(token.text()[i])) continue;
      if (i > begin) parts.push_back(token.slice(begin, i));
      parts.push_back(token.slice(i, i + 1));
      begin = i + 1;
    }
    if (token.size() > begin) parts.push_back(token.slice(begin, token.size()));
    for (const auto& part : parts) split_removing(part, unicode::is_python_space, out);
  }
}

// Greedy longest-match-first over the word's characters; one unmatchable piece makes the whole word
// the unknown token (as does a word longer than max_chars_).
std::string WordPieceModel::wordpiece(const NormalizedText& word, int32_t word_idx, SentenceTokens& out) const {
  const std::u32string& chars = word.text();
  const CharSpan whole = word.original(0, chars.size());
  if (chars.size() > max_chars_) {
    out.push(unk_id_, unk_token_, word_idx, false, whole);
    return unicode::encode(chars);
  }
  std::string utf8;
  std::vector<std::size_t> offset(1, 0);  // byte offset of each code point
  offset.reserve(chars.size() + 1);
  for (char32_t c : chars) {
    char bytes[4];
    utf8.append(bytes, unicode::encode_char(c, bytes));
    offset.push_back(utf8.size());
  }
  const std::size_t first = out.ids.size();
  std::size_t start = 0;
  std::string piece;
  while (start < chars.size()) {
    std::size_t end = chars.size();
    int32_t found = -1;
    while (start < end) {
      piece.assign(start > 0 ? std::string_view(prefix_) : std::string_view());
      piece.append(utf8, offset[start], offset[end] - offset[start]);
      found = vocab_.find(piece);
      if (found >= 0) break;
      --end;
    }
    if (found < 0) {
      out.resize(first);
      out.push(unk_id_, unk_token_, word_idx, false, whole);
      return utf8;
    }
    out.push(found, piece, word_idx, false, word.original(start, end));
    start = end;
  }
  return utf8;
}

void WordPieceModel::push_special(const NormalizedText& text, SentenceTokens& out) const {
  const std::string tok = unicode::encode(text.text());
  push_added(out, tok, special_ids_.at(tok), true, text.original(0, text.size()));
}

SentenceTokens WordPieceModel::tokenize(std::string_view text) const {
  if (fast_) return tokenize_fast(text);
  NormalizedText u(unicode::decode(text));
  // HF's tokenize() lowercases the text except the special tokens written in it, before splitting them
  // out: "<MASK>" becomes the special "<mask>" for MPNet.
  if (config_.do_lower_case) lower_except(u, specials_);
  SentenceTokens out;
  for (auto& chunk : split_slow_added(u, slow_specials_)) {
    if (chunk.added >= 0) {
      push_special(chunk.text, out);
      continue;
    }
    std::vector<NormalizedText> words;
    basic_words(std::move(chunk.text), words);
    for (auto& w : words) {
      if (is_special(specials_, w.text())) {
        push_special(w, out);
        continue;
      }
      out.words.push_back(wordpiece(w, static_cast<int32_t>(out.words.size()), out));
    }
  }
  return out;
}

SentenceTokens WordPieceModel::tokenize_fast(std::string_view text) const {
  SentenceTokens out;
  const std::u32string chars = unicode::decode(text);
  for (auto& piece : detail::split_added_tokens(*fast_, chars)) {
    if (piece.added >= 0) {
      const auto& a = fast_->added[static_cast<std::size_t>(piece.added)];
      push_added(out, a.content, a.id, a.special, piece.text.original(0, piece.text.size()));
      continue;
    }
    for (const auto& w : detail::pre_tokenize(fast_->pre_tokenizers, std::move(piece.text))) {
      out.words.push_back(wordpiece(w, static_cast<int32_t>(out.words.size()), out));
    }
  }
  if (fast_->trim_offsets) trim_offsets(out, chars, fast_->trim_prefix_space);
  return out;
}

}  // namespace attnscan::detail
