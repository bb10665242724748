#include "attnscan/tokenizer.hpp"

#include <fstream>

#include "attnscan/error.hpp"
#include "engine/fast_text.hpp"
#include "engine/json_file.hpp"
#include "engine/tokenizer_json.hpp"
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

// The added tokens HF's slow tokenizer splits out of text besides the special tokens of
// tokenizer_config.json: its added_tokens_decoder, else tokenizer.json's added_tokens.
std::vector<std::string> slow_added_tokens(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  const auto config = dir / "tokenizer_config.json";
  if (std::filesystem::exists(config)) {
    auto j = read_json_file(config);
    if (j.is_object() && j.contains("added_tokens_decoder") && j["added_tokens_decoder"].is_object()) {
      for (const auto& t : j["added_tokens_decoder"])
        if (t.is_object() && t.contains("content") && t["content"].is_string())
          out.push_back(t["content"].get<std::string>());
      return out;
    }
  }
  if (std::filesystem::exists(dir / "tokenizer.json")) return detail::added_token_contents(dir / "tokenizer.json");
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
Vocab::Vocab(const std::vector<std::pair<std::string, int32_t>>& entries) {
  int32_t max_id = -1;
  for (const auto& e : entries) max_id = std::max(max_id, e.second);
  tokens_.resize(static_cast<std::size_t>(max_id + 1));
  ids_.reserve(entries.size());
  for (const auto& e : entries) {
    tokens_[static_cast<std::size_t>(e.second)] = e.first;
    ids_[e.first] = e.second;
  }
}

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
    : WordPieceTokenizer(std::move(vocab), std::move(config), "bert") {}

WordPieceTokenizer::WordPieceTokenizer(Vocab vocab, TokenizerConfig config, const std::string& model_type,
                                       std::vector<std::string> extra_specials)
    : vocab_(std::move(vocab)), config_(std::move(config)) {
  auto need = [&](const std::string& tok) {
    int32_t id = vocab_.find(tok);
    if (id < 0) throw ModelError("vocabulary has no special token '" + tok + "'");
    return id;
  };
  cls_id_ = need(config_.cls_token);
  sep_id_ = need(config_.sep_token);
  pad_id_ = need(config_.pad_token);
  unk_id_ = need(config_.unk_token);
  unk_token_ = config_.unk_token;
  std::vector<std::string> candidates = {config_.unk_token, config_.sep_token, config_.pad_token,
                                         config_.cls_token, config_.mask_token};
  candidates.insert(candidates.end(), extra_specials.begin(), extra_specials.end());
  for (const auto& t : candidates) {  // a special the vocabulary lacks cannot be given an id: not split out
    const int32_t id = vocab_.find(t);
    if (id < 0 || t.empty() || special_ids_.count(t)) continue;
    specials_.push_back(t);
    special_ids_[t] = id;
  }
  const bool roberta = uses_roberta_template(model_type);
  template_ = roberta ? PairTemplate::roberta(config_.cls_token, cls_id_, config_.sep_token, sep_id_)
                      : PairTemplate::bert(config_.cls_token, cls_id_, config_.sep_token, sep_id_);
  source_ = std::string("vocab.txt (WordPiece, ") + (roberta ? "RoBERTa" : "BERT") + " template)";
}

WordPieceTokenizer WordPieceTokenizer::from_model_dir(const std::filesystem::path& dir, const BertConfig& model,
                                                      TokenizerFile file) {
  const auto vocab_txt = dir / "vocab.txt", tokenizer_json = dir / "tokenizer.json";
  if (file == TokenizerFile::Auto) {
    if (std::filesystem::exists(vocab_txt)) file = TokenizerFile::VocabTxt;
    else if (std::filesystem::exists(tokenizer_json)) file = TokenizerFile::TokenizerJson;
    else
      throw ModelError(dir.string() + ": no tokenizer file: attnscan reads vocab.txt (the slow WordPiece "
                       "tokenizer) or tokenizer.json (the fast tokenizer, WordPiece model); neither is there");
  }
  if (file == TokenizerFile::TokenizerJson) {
    if (!std::filesystem::exists(tokenizer_json))
      throw ModelError(tokenizer_json.string() + ": missing from the model directory");
    return from_tokenizer_json(tokenizer_json, model, load_tokenizer_config(dir, model));
  }
  if (!std::filesystem::exists(vocab_txt)) throw ModelError(vocab_txt.string() + ": missing from the model directory");
  auto vocab = Vocab::load(vocab_txt);
  if (static_cast<int64_t>(vocab.size()) > model.vocab_size)
    throw ModelError(vocab_txt.string() + ": " + std::to_string(vocab.size()) +
                     " tokens but config.json says vocab_size " + std::to_string(model.vocab_size));
  return WordPieceTokenizer(std::move(vocab), load_tokenizer_config(dir, model), model.model_type,
                            slow_added_tokens(dir));
}

WordPieceTokenizer WordPieceTokenizer::from_tokenizer_json(const std::filesystem::path& tokenizer_json,
                                                           const BertConfig& model, TokenizerConfig config) {
  auto p = std::make_shared<detail::FastPipeline>(detail::read_tokenizer_json(tokenizer_json));
  const std::string where = tokenizer_json.string();
  int64_t max_id = static_cast<int64_t>(p->vocab.size()) - 1;
  for (const auto& a : p->added) max_id = std::max<int64_t>(max_id, a.id);
  if (max_id >= model.vocab_size)
    throw ModelError(where + ": token id " + std::to_string(max_id) + " but config.json says vocab_size " +
                     std::to_string(model.vocab_size));
  WordPieceTokenizer t;
  auto find = [&](const std::string& tok) -> int32_t {
    for (const auto& a : p->added)
      if (a.content == tok) return a.id;
    return p->vocab.find(tok);
  };
  if (!std::filesystem::exists(tokenizer_json.parent_path() / "tokenizer_config.json") && p->pad_token)
    config.pad_token = *p->pad_token;
  config.unk_token = p->unk_token;
  const auto& tpl = p->pair_template;
  if (!tpl.prefix.empty()) config.cls_token = tpl.prefix.front().token;
  if (!tpl.suffix.empty()) config.sep_token = tpl.suffix.back().token;
  t.cls_id_ = tpl.prefix.empty() ? find(config.cls_token) : tpl.prefix.front().id;
  t.sep_id_ = tpl.suffix.empty() ? find(config.sep_token) : tpl.suffix.back().id;
  t.pad_id_ = find(config.pad_token);
  if (t.pad_id_ < 0)
    throw ModelError(where + ": pad token '" + config.pad_token + "' (from tokenizer_config.json) is not in the vocab");
  t.unk_id_ = p->vocab.find(p->unk_token);
  t.unk_token_ = p->unk_token;
  t.prefix_ = p->continuing_subword_prefix;
  t.max_chars_ = p->max_input_chars_per_word;
  t.template_ = tpl;
  t.truncation_ = LongestFirst::Tokenizers;
  t.source_ = p->description;
  t.vocab_ = p->vocab;
  t.config_ = std::move(config);
  t.fast_ = std::move(p);
  return t;
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

void WordPieceTokenizer::wordpiece(const std::string& word, int32_t word_idx, bool special,
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

SentenceTokens WordPieceTokenizer::tokenize(std::string_view text) const {
  if (fast_) return tokenize_fast(text);
  std::u32string u = unicode::decode(text);
  std::vector<std::u32string> specials32;
  for (const auto& s : specials_) specials32.push_back(unicode::decode(s));
  auto special_at = [&](std::size_t i) -> const std::u32string* {
    const std::u32string* hit = nullptr;
    for (const auto& s : specials32)
      if (!s.empty() && u.compare(i, s.size(), s) == 0 && (!hit || s.size() > hit->size())) hit = &s;
    return hit;
  };
  if (config_.do_lower_case) {
    // HF's tokenize() lowercases the text character by character except the special tokens written in
    // it, before splitting them out: "<MASK>" becomes the special "<mask>" for MPNet.
    std::u32string lowered;
    lowered.reserve(u.size());
    for (std::size_t i = 0; i < u.size();) {
      if (const auto* hit = special_at(i)) {
        lowered += *hit;
        i += hit->size();
      } else {
        lowered += unicode::python_lower(std::u32string_view(&u[i], 1));
        ++i;
      }
    }
    u.swap(lowered);
  }
  SentenceTokens out;
  std::size_t pos = 0;
  auto flush_text = [&](std::size_t end) {
    if (end <= pos) return;
    std::vector<std::string> words;
    basic_words(unicode::encode(std::u32string_view(u.data() + pos, end - pos)), words);
    for (auto& w : words) {
      wordpiece(w, static_cast<int32_t>(out.words.size()), is_special(specials_, w), out);
      out.words.push_back(std::move(w));
    }
  };
  std::size_t i = 0;
  while (i < u.size()) {
    const std::u32string* hit = special_at(i);
    if (!hit) {
      ++i;
      continue;
    }
    flush_text(i);
    std::string tok = unicode::encode(*hit);
    wordpiece(tok, static_cast<int32_t>(out.words.size()), true, out);
    out.words.push_back(tok);
    i += hit->size();
    pos = i;
  }
  flush_text(u.size());
  return out;
}

SentenceTokens WordPieceTokenizer::tokenize_fast(std::string_view text) const {
  SentenceTokens out;
  for (const auto& piece : detail::split_added_tokens(*fast_, unicode::decode(text))) {
    if (piece.added >= 0) {
      const auto& a = fast_->added[static_cast<std::size_t>(piece.added)];
      out.ids.push_back(a.id);
      out.pieces.push_back(a.content);
      out.word_index.push_back(static_cast<int32_t>(out.words.size()));
      out.special.push_back(a.special ? 1 : 0);
      out.words.push_back(a.content);
      continue;
    }
    for (const auto& w : detail::pre_tokenize(fast_->pre_tokenizers, piece.text)) {
      std::string word = unicode::encode(w);
      wordpiece(word, static_cast<int32_t>(out.words.size()), false, out);
      out.words.push_back(std::move(word));
    }
  }
  return out;
}

Encoding WordPieceTokenizer::assemble(const SentenceTokens& a, const SentenceTokens* b,
                                      std::size_t max_length) const {
  if (max_length == 0) max_length = static_cast<std::size_t>(config_.model_max_length);
  const std::size_t n_special = template_.added(b != nullptr);
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
    } else if (truncation_ == LongestFirst::Transformers) {  // transformers' truncate_sequences
      std::size_t diff = len_a > len_b ? len_a - len_b : len_b - len_a;
      std::size_t first = std::min(diff, remove), second = remove - first;
      if (len_a > len_b) {
        e.removed_a = first + second / 2;
        e.removed_b = second - second / 2;
      } else {
        e.removed_a = second / 2;
        e.removed_b = first + second - second / 2;
      }
    } else {  // tokenizers' truncate_encodings, LongestFirst
      const std::size_t budget = max_length - n_special;
      std::size_t n1 = std::min(len_a, len_b), n2 = std::max(len_a, len_b);
      n2 = n1 > budget ? n1 : std::max(n1, budget - n1);
      if (n1 + n2 > budget) {
        n1 = budget / 2;
        n2 = n1 + budget % 2;
      }
      const std::size_t keep_a = std::min(len_a, len_a > len_b ? n2 : n1);
      const std::size_t keep_b = std::min(len_b, len_a > len_b ? n1 : n2);
      e.removed_a = len_a - keep_a;
      e.removed_b = len_b - keep_b;
    }
    len_a -= e.removed_a;
    len_b -= e.removed_b;
  }
  e.tokens_a = len_a;
  e.tokens_b = len_b;
  auto add_specials = [&](const std::vector<TemplateToken>& tokens, uint8_t seg) {
    for (const auto& t : tokens) {
      e.ids.push_back(t.id);
      e.tokens.push_back(t.token);
      e.segment.push_back(seg);
      e.type_ids.push_back(t.type_id);
      e.word_index.push_back(-1);
      e.special.push_back(1);
    }
  };
  auto add_sentence = [&](const SentenceTokens& s, std::size_t n, uint8_t seg, uint8_t type) {
    for (std::size_t i = 0; i < n; ++i) {
      e.ids.push_back(s.ids[i]);
      e.tokens.push_back(s.pieces[i]);
      e.segment.push_back(seg);
      e.type_ids.push_back(type);
      e.word_index.push_back(s.word_index[i]);
      e.special.push_back(s.special[i]);
    }
  };
  e.ids.reserve(len_a + len_b + n_special);
  e.words_a = a.words;
  if (b) {
    add_specials(template_.prefix, 0);
    add_sentence(a, len_a, 0, template_.type_a);
    add_specials(template_.middle, 0);
    add_sentence(*b, len_b, 1, template_.type_b);
    add_specials(template_.suffix, 1);
    e.words_b = b->words;
  } else {
    add_specials(template_.single_prefix, 0);
    add_sentence(a, len_a, 0, template_.single_type_a);
    add_specials(template_.single_suffix, 0);
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
