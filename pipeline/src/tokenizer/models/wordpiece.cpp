#include <algorithm>

#include "common/error.hpp"
#include "tokenizer/fast_text.hpp"
#include "tokenizer/models/subword_model.hpp"
#include "tokenizer/files/tokenizer_json.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

bool is_special(const std::vector<std::string>& specials, const std::string& s) {
  for (const auto& t : specials)
    if (t == s) return true;
  return false;
}

// str.split() with no arguments.
std::vector<std::u32string> python_split(std::u32string_view text) {
  std::vector<std::u32string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && unicode::is_python_space(text[i])) ++i;
    std::size_t j = i;
    while (j < text.size() && !unicode::is_python_space(text[j])) ++j;
    if (j > i) out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

std::u32string strip_accents(std::u32string_view text) {
  std::u32string out;
  for (char32_t c : unicode::nfd(text))
    if (!(unicode::category(c)[0] == 'M' && unicode::category(c)[1] == 'n')) out.push_back(c);
  return out;
}

}  // namespace

WordPieceModel::WordPieceModel(Vocab vocab, TokenizerConfig config, std::vector<std::string> specials)
    : vocab_(std::move(vocab)), config_(std::move(config)), specials_(std::move(specials)) {
  for (const auto& t : specials_) {
    special_ids_[t] = vocab_.find(t);
    slow_specials_.push_back({t, special_ids_[t]});
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

void WordPieceModel::basic_words(std::string_view chunk_utf8, std::vector<std::string>& out) const {
  std::u32string cleaned;
  for (char32_t c : unicode::decode(chunk_utf8)) {
    if (c == 0 || c == 0xFFFD || unicode::is_control(c)) continue;
    if (unicode::is_whitespace(c)) {
      cleaned.push_back(U' ');
    } else if (config_.tokenize_chinese_chars && unicode::is_cjk(c)) {
      cleaned.push_back(U' ');
      cleaned.push_back(c);
      cleaned.push_back(U' ');
    } else {
      cleaned.push_back(c);
    }
  }
  const bool strip = config_.strip_accents.value_or(config_.do_lower_case);
  std::u32string joined;  // HF re-splits " ".join(split_tokens) on whitespace
  for (auto& token : python_split(unicode::nfc(cleaned))) {
    std::string utf8 = unicode::encode(token);
    if (is_special(specials_, utf8)) {
      joined += token;
      joined.push_back(U' ');
      continue;
    }
    if (config_.do_lower_case) token = unicode::python_lower(token);
    if (strip) token = strip_accents(token);
    bool new_word = true;
    for (char32_t c : token) {
      if (unicode::is_punctuation(c)) {
        joined.push_back(U' ');
        joined.push_back(c);
        joined.push_back(U' ');
        new_word = true;
      } else {
        if (new_word) joined.push_back(U' ');
        new_word = false;
        joined.push_back(c);
      }
    }
    joined.push_back(U' ');
  }
  for (const auto& w : python_split(joined)) out.push_back(unicode::encode(w));
}

void WordPieceModel::wordpiece(const std::string& word, int32_t word_idx, bool special,
                                   SentenceTokens& out) const {
  auto push = [&](int32_t id, std::string piece, bool is_special) {
    out.ids.push_back(id);
    out.pieces.push_back(std::move(piece));
    out.word_index.push_back(word_idx);
    out.special.push_back(is_special ? 1 : 0);
  };
  if (special) {
    push(special_ids_.at(word), word, true);
    return;
  }
  std::u32string chars = unicode::decode(word);
  if (chars.size() > max_chars_) {
    push(unk_id_, unk_token_, false);
    return;
  }
  std::vector<std::size_t> offset(chars.size() + 1, 0);  // byte offset of each code point
  for (std::size_t i = 0; i < chars.size(); ++i)
    offset[i + 1] = offset[i] + unicode::encode(std::u32string_view(&chars[i], 1)).size();
  const std::size_t first = out.ids.size();
  std::size_t start = 0;
  while (start < chars.size()) {
    std::size_t end = chars.size();
    int32_t found = -1;
    std::string piece;
    while (start < end) {
      piece = (start > 0 ? prefix_ : std::string()) + word.substr(offset[start], offset[end] - offset[start]);
      found = vocab_.find(piece);
      if (found >= 0) break;
      --end;
    }
    if (found < 0) {  // one unmatchable piece makes the whole word [UNK]
      out.ids.resize(first);
      out.pieces.resize(first);
      out.word_index.resize(first);
      out.special.resize(first);
      push(unk_id_, unk_token_, false);
      return;
    }
    push(found, std::move(piece), false);
    start = end;
  }
}

SentenceTokens WordPieceModel::tokenize(std::string_view text) const {
  if (fast_) return tokenize_fast(text);
  std::u32string u = unicode::decode(text);
  // HF's tokenize() lowercases the text except the special tokens written in it, before splitting them
  // out: "<MASK>" becomes the special "<mask>" for MPNet.
  if (config_.do_lower_case) u = lower_except(u, specials_);
  SentenceTokens out;
  for (const auto& chunk : split_slow_added(u, slow_specials_)) {
    if (chunk.added >= 0) {
      const std::string& tok = specials_[static_cast<std::size_t>(chunk.added)];
      wordpiece(tok, static_cast<int32_t>(out.words.size()), true, out);
      out.words.push_back(tok);
      continue;
    }
    std::vector<std::string> words;
    basic_words(unicode::encode(chunk.text), words);
    for (auto& w : words) {
      wordpiece(w, static_cast<int32_t>(out.words.size()), is_special(specials_, w), out);
      out.words.push_back(std::move(w));
    }
  }
  return out;
}

SentenceTokens WordPieceModel::tokenize_fast(std::string_view text) const {
  SentenceTokens out;
  bool at_start = true;  // Metaspace's prepend_scheme "first" prepends before the first chunk only
  for (const auto& piece : detail::split_added_tokens(*fast_, unicode::decode(text))) {
    if (piece.added >= 0) {
      const auto& a = fast_->added[static_cast<std::size_t>(piece.added)];
      push_added(out, a.content, a.id, a.special);
      at_start = false;
      continue;
    }
    for (const auto& w : detail::pre_tokenize(fast_->pre_tokenizers, piece.text, at_start)) {
      std::string word = unicode::encode(w);
      wordpiece(word, static_cast<int32_t>(out.words.size()), false, out);
      out.words.push_back(std::move(word));
    }
    at_start = false;
  }
  return out;
}

}  // namespace attnscan::detail
