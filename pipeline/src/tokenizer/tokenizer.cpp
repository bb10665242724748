#include "tokenizer/tokenizer.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "tokenizer/files/recipes.hpp"
#include "tokenizer/models/subword_model.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan {

const char* to_string(SubwordKind kind) {
  switch (kind) {
    case SubwordKind::WordPiece: return "WordPiece";
    case SubwordKind::ByteLevelBpe: return "byte-level BPE";
    case SubwordKind::Unigram: return "Unigram";
    case SubwordKind::WordLevel: return "WordLevel";
    case SubwordKind::Bpe: return "BPE";
  }
  return "?";
}

void SentenceTokens::push(int32_t id, std::string piece, int32_t word, bool is_special, CharSpan span) {
  ids.push_back(id);
  pieces.push_back(std::move(piece));
  word_index.push_back(word);
  special.push_back(is_special ? 1 : 0);
  offsets.push_back(span);
}

void SentenceTokens::resize(std::size_t n) {
  ids.resize(n);
  pieces.resize(n);
  word_index.resize(n);
  special.resize(n);
  offsets.resize(n);
}

namespace {

std::vector<detail::SlowAddedToken> by_content(const std::vector<std::string>& tokens) {  // ids: the vocabulary's
  std::vector<detail::SlowAddedToken> out;
  for (const auto& t : tokens) out.push_back({t});
  return out;
}

}  // namespace

Tokenizer::Tokenizer(TokenizerParts parts) : p_(std::move(parts)) {}

int32_t Tokenizer::pad_id() const {
  const auto& s = p_.specials;
  return s.pad ? *s.pad : s.end ? *s.end : s.begin.value_or(0);
}

Tokenizer::Tokenizer(Vocab vocab, TokenizerConfig config, TemplateKind pair_template,
                     std::vector<std::string> extra_specials)
    : Tokenizer(detail::wordpiece_slow_parts(std::move(vocab), std::move(config), pair_template, by_content(extra_specials))) {}

SentenceTokens Tokenizer::tokenize(std::string_view text) const { return p_.model->tokenize(text); }

Encoding Tokenizer::assemble(SentenceTokens& a, SentenceTokens* b, std::size_t max_length) const {
  if (max_length == 0) max_length = static_cast<std::size_t>(p_.config.model_max_length);
  const std::size_t n_special = p_.pair_template.added(b != nullptr);
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
    } else if (p_.truncation == LongestFirst::Transformers) {  // transformers' truncate_sequences
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
      e.offsets.push_back({});
    }
  };
  auto add_sentence = [&](SentenceTokens& s, std::size_t n, uint8_t seg, uint8_t type) {
    for (std::size_t i = 0; i < n; ++i) {
      e.ids.push_back(s.ids[i]);
      e.tokens.push_back(std::move(s.pieces[i]));
      e.segment.push_back(seg);
      e.type_ids.push_back(type);
      e.word_index.push_back(s.word_index[i]);
      e.special.push_back(s.special[i]);
      e.offsets.push_back(s.offsets[i]);
    }
  };
  const std::size_t size = len_a + len_b + n_special;
  e.ids.reserve(size);
  e.tokens.reserve(size);
  e.segment.reserve(size);
  e.type_ids.reserve(size);
  e.word_index.reserve(size);
  e.special.reserve(size);
  e.offsets.reserve(size);
  e.words_a = std::move(a.words);
  if (b) {
    add_specials(p_.pair_template.prefix, 0);
    add_sentence(a, len_a, 0, p_.pair_template.type_a);
    add_specials(p_.pair_template.middle, 0);
    add_sentence(*b, len_b, 1, p_.pair_template.type_b);
    add_specials(p_.pair_template.suffix, 1);
    e.words_b = std::move(b->words);
  } else {
    add_specials(p_.pair_template.single_prefix, 0);
    add_sentence(a, len_a, 0, p_.pair_template.single_type_a);
    add_specials(p_.pair_template.single_suffix, 0);
  }
  return e;
}

Encoding Tokenizer::encode_pair(std::string_view a, std::string_view b,
                                         std::size_t max_length) const {
  if (p_.pairs == PairEncoding::Joined) return encode_joined(a, b, max_length);
  SentenceTokens ta = tokenize(a), tb = tokenize(b);
  return assemble(ta, &tb, max_length);
}

Encoding Tokenizer::encode_single(std::string_view a, std::size_t max_length) const {
  SentenceTokens ta = tokenize(a);
  return assemble(ta, nullptr, max_length);
}

SentenceTokens Tokenizer::tokenize_words(const std::vector<std::string>& words) const {
  SentenceTokens out;
  int64_t at = 0;  // where word w starts in the words joined by single spaces
  for (std::size_t w = 0; w < words.size(); ++w) {
    const bool space = w > 0 && p_.kind == SubwordKind::ByteLevelBpe;
    SentenceTokens t = tokenize(space ? " " + words[w] : words[w]);
    std::string normalised;
    for (const auto& part : t.words) normalised += part;
    out.words.push_back(normalised.empty() ? words[w] : normalised);
    const int64_t shift = at - (space ? 1 : 0);  // the space put before the word is the one joining it
    for (std::size_t i = 0; i < t.ids.size(); ++i) {
      const CharSpan span = t.offsets[i].start < 0 ? t.offsets[i] : CharSpan{t.offsets[i].start + shift, t.offsets[i].end + shift};
      out.push(t.ids[i], std::move(t.pieces[i]), static_cast<int32_t>(w), t.special[i], span);
    }
    at += static_cast<int64_t>(unicode::char_count(words[w])) + 1;
  }
  return out;
}

Encoding Tokenizer::encode_words(const std::vector<std::string>& a, const std::vector<std::string>* b,
                                 std::size_t max_length) const {
  SentenceTokens ta = tokenize_words(a);
  if (!b) return assemble(ta, nullptr, max_length);
  if (p_.pairs == PairEncoding::Joined) return encode_joined_words(a, *b, max_length);
  SentenceTokens tb = tokenize_words(*b);
  return assemble(ta, &tb, max_length);
}

}  // namespace attnscan
