#include "attnscan/tokenizer.hpp"

#include <fstream>

#include "attnscan/error.hpp"
#include "engine/unicode_text.hpp"

namespace attnscan {

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

// ---------------------------------------------------------------------------------------------
Vocab::Vocab(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  ids_.reserve(tokens_.size());
  for (std::size_t i = 0; i < tokens_.size(); ++i) ids_[tokens_[i]] = static_cast<int32_t>(i);
}

Vocab Vocab::load(const std::filesystem::path& vocab_txt) {
  std::ifstream in(vocab_txt, std::ios::binary);
  if (!in) throw ModelError(vocab_txt.string() + ": cannot open vocabulary file");
  std::vector<std::string> tokens;
  std::string line;
  while (std::getline(in, line)) tokens.push_back(line);  // HF strips only "\n"
  if (tokens.empty()) throw ModelError(vocab_txt.string() + ": vocabulary file is empty");
  return Vocab(std::move(tokens));
}

int32_t Vocab::find(std::string_view token) const {
  auto it = ids_.find(std::string(token));
  return it == ids_.end() ? -1 : it->second;
}

// ---------------------------------------------------------------------------------------------
WordPieceTokenizer::WordPieceTokenizer(Vocab vocab, TokenizerConfig config)
    : vocab_(std::move(vocab)), config_(std::move(config)) {
  specials_ = {config_.unk_token, config_.sep_token, config_.pad_token, config_.cls_token,
               config_.mask_token};
  auto need = [&](const std::string& tok) {
    int32_t id = vocab_.find(tok);
    if (id < 0) throw ModelError("vocabulary has no special token '" + tok + "'");
    return id;
  };
  cls_id_ = need(config_.cls_token);
  sep_id_ = need(config_.sep_token);
  pad_id_ = need(config_.pad_token);
  unk_id_ = need(config_.unk_token);
}

WordPieceTokenizer WordPieceTokenizer::from_model_dir(const std::filesystem::path& dir,
                                                      const BertConfig& model) {
  auto vocab = Vocab::load(dir / "vocab.txt");
  if (static_cast<int64_t>(vocab.size()) > model.vocab_size)
    throw ModelError((dir / "vocab.txt").string() + ": " + std::to_string(vocab.size()) +
                     " tokens but config.json says vocab_size " + std::to_string(model.vocab_size));
  return WordPieceTokenizer(std::move(vocab), load_tokenizer_config(dir, model));
}

void WordPieceTokenizer::basic_words(std::string_view chunk_utf8, std::vector<std::string>& out) const {
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

void WordPieceTokenizer::wordpiece(const std::string& word, int32_t word_idx, SentenceTokens& out) const {
  auto push = [&](int32_t id, std::string piece, bool special) {
    out.ids.push_back(id);
    out.pieces.push_back(std::move(piece));
    out.word_index.push_back(word_idx);
    out.special.push_back(special ? 1 : 0);
  };
  if (is_special(specials_, word)) {
    push(vocab_.find(word), word, true);
    return;
  }
  std::u32string chars = unicode::decode(word);
  if (chars.size() > kMaxCharsPerWord) {
    push(unk_id_, config_.unk_token, false);
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
      piece = (start > 0 ? "##" : "") + word.substr(offset[start], offset[end] - offset[start]);
      found = vocab_.find(piece);
      if (found >= 0) break;
      --end;
    }
    if (found < 0) {  // one unmatchable piece makes the whole word [UNK]
      out.ids.resize(first);
      out.pieces.resize(first);
      out.word_index.resize(first);
      out.special.resize(first);
      push(unk_id_, config_.unk_token, false);
      return;
    }
    push(found, std::move(piece), false);
    start = end;
  }
}

SentenceTokens WordPieceTokenizer::tokenize(std::string_view text) const {
  std::u32string u = unicode::decode(text);
  SentenceTokens out;
  // Split out special tokens written in the text (HF's added-tokens trie), then lowercase the rest
  // character by character as HF's tokenize() does before the basic tokenizer runs.
  std::size_t pos = 0;
  auto flush_text = [&](std::size_t end) {
    if (end <= pos) return;
    std::u32string_view span(u.data() + pos, end - pos);
    std::u32string piece;
    if (config_.do_lower_case) {
      for (char32_t c : span) piece += unicode::python_lower(std::u32string_view(&c, 1));
    } else {
      piece.assign(span);
    }
    std::vector<std::string> words;
    basic_words(unicode::encode(piece), words);
    for (auto& w : words) {
      wordpiece(w, static_cast<int32_t>(out.words.size()), out);
      out.words.push_back(std::move(w));
    }
  };
  std::vector<std::u32string> specials32;
  for (const auto& s : specials_) specials32.push_back(unicode::decode(s));
  std::size_t i = 0;
  while (i < u.size()) {
    const std::u32string* hit = nullptr;
    for (const auto& s : specials32)
      if (!s.empty() && u.compare(i, s.size(), s) == 0 && (!hit || s.size() > hit->size())) hit = &s;
    if (!hit) {
      ++i;
      continue;
    }
    flush_text(i);
    std::string tok = unicode::encode(*hit);
    wordpiece(tok, static_cast<int32_t>(out.words.size()), out);
    out.words.push_back(tok);
    i += hit->size();
    pos = i;
  }
  flush_text(u.size());
  return out;
}

Encoding WordPieceTokenizer::assemble(const SentenceTokens& a, const SentenceTokens* b,
                                      std::size_t max_length) const {
  if (max_length == 0) max_length = static_cast<std::size_t>(config_.model_max_length);
  const std::size_t n_special = b ? 3 : 2;
  if (max_length < n_special + (b ? 0 : 1))
    throw Error("max_length " + std::to_string(max_length) + " leaves no room for any token");
  std::size_t len_a = a.ids.size(), len_b = b ? b->ids.size() : 0;
  Encoding e;
  const std::size_t total = len_a + len_b + n_special;
  if (total > max_length) {
    const std::size_t remove = total - max_length;
    e.truncated = true;
    if (!b) {
      if (len_a <= remove) throw Error("max_length too small to keep any token of the sentence");
      e.removed_a = remove;
    } else {  // HF truncate_sequences, longest_first
      std::size_t diff = len_a > len_b ? len_a - len_b : len_b - len_a;
      std::size_t first = std::min(diff, remove), second = remove - first;
      if (len_a > len_b) {
        e.removed_a = first + second / 2;
        e.removed_b = second - second / 2;
      } else {
        e.removed_a = second / 2;
        e.removed_b = first + second - second / 2;
      }
    }
    len_a -= e.removed_a;
    len_b -= e.removed_b;
  }
  e.tokens_a = len_a;
  e.tokens_b = len_b;
  auto add_special = [&](int32_t id, const std::string& text, uint8_t seg) {
    e.ids.push_back(id);
    e.tokens.push_back(text);
    e.segment.push_back(seg);
    e.word_index.push_back(-1);
    e.special.push_back(1);
  };
  auto add_sentence = [&](const SentenceTokens& s, std::size_t n, uint8_t seg) {
    for (std::size_t i = 0; i < n; ++i) {
      e.ids.push_back(s.ids[i]);
      e.tokens.push_back(s.pieces[i]);
      e.segment.push_back(seg);
      e.word_index.push_back(s.word_index[i]);
      e.special.push_back(s.special[i]);
    }
  };
  e.ids.reserve(len_a + len_b + n_special);
  add_special(cls_id_, config_.cls_token, 0);
  add_sentence(a, len_a, 0);
  add_special(sep_id_, config_.sep_token, 0);
  e.words_a = a.words;
  if (b) {
    add_sentence(*b, len_b, 1);
    add_special(sep_id_, config_.sep_token, 1);
    e.words_b = b->words;
  }
  return e;
}

Encoding WordPieceTokenizer::encode_pair(std::string_view a, std::string_view b,
                                         std::size_t max_length) const {
  SentenceTokens ta = tokenize(a), tb = tokenize(b);
  return assemble(ta, &tb, max_length);
}

Encoding WordPieceTokenizer::encode_single(std::string_view a, std::size_t max_length) const {
  SentenceTokens ta = tokenize(a);
  return assemble(ta, nullptr, max_length);
}

}  // namespace attnscan
