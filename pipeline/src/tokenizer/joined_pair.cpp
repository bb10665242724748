// Sentence pairs joined as one text (PairEncoding::Joined, the decoders): a + separator + b through the
// single-sentence template, each token given back to its sentence by its character offsets, so that an
// Encoding of a joined pair reads as a template pair's does (tokenizer.hpp, Tokenizer::encode_pair).
#include <algorithm>

#include "common/error.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan {

namespace {

// The part of the joined text a token stands for.
enum class Part : uint8_t { A = 0, Separator = 1, B = 2 };

// A joined pair's tokens, the template's not yet added: each token's part, its offsets and word_index within
// its own sentence (-1 for the separator's tokens); `tokens.words` unused.
struct JoinedTokens {
  SentenceTokens tokens;
  std::vector<Part> parts;
  std::vector<std::string> words_a, words_b;

  void push(SentenceTokens& from, std::size_t i, Part part, int32_t word, CharSpan span) {
    const bool separator = part == Part::Separator;
    tokens.push(from.ids[i], std::move(from.pieces[i]), separator ? -1 : word, separator || from.special[i],
                separator ? CharSpan{} : span);
    parts.push_back(part);
  }
};

// Characters [a_end, b_start) of the joined text are the separator. A token starting in b is B's, one ending
// by a's end A's; the rest (the separator's tokens, a token reaching across a's end) the separator's.
Part part_of(CharSpan span, int64_t a_end, int64_t b_start) {
  if (span.start >= b_start) return Part::B;
  if (span.end <= a_end) return Part::A;
  return Part::Separator;
}

std::vector<Part> token_parts(const SentenceTokens& joined, int64_t a_end, int64_t b_start) {
  std::vector<Part> parts;
  for (std::size_t i = 0; i < joined.ids.size(); ++i) {
    const CharSpan span = joined.offsets[i];
    // A token without characters (none the tokenizer could align) stays with the token before it.
    if (span.start < 0) parts.push_back(parts.empty() ? Part::A : parts.back());
    else parts.push_back(part_of(span, a_end, b_start));
  }
  return parts;
}

// The words of one sentence, numbered from 0 in the order its tokens meet them. A word of the joined text whose
// tokens all lie in this sentence keeps its text; one shared with the other sentence or the separator gets the
// characters its tokens here cover (filled by name_shared_words).
class SentenceWords {
 public:
  SentenceWords(std::size_t joined_words, std::vector<std::string>& words) : index_(joined_words, -1), words_(words) {}

  int32_t add(int32_t joined_word, bool shared, const std::string& text, CharSpan span) {
    int32_t& w = index_[static_cast<std::size_t>(joined_word)];
    if (w < 0) {
      w = static_cast<int32_t>(words_.size());
      words_.push_back(shared ? std::string() : text);
      spans_.push_back(shared ? span : CharSpan{});
    } else if (shared && span.start >= 0) {
      CharSpan& s = spans_[static_cast<std::size_t>(w)];
      s = s.start < 0 ? span : CharSpan{std::min(s.start, span.start), std::max(s.end, span.end)};
    }
    return w;
  }

  void name_shared_words(std::string_view sentence) {
    std::u32string chars;
    for (std::size_t w = 0; w < words_.size(); ++w) {
      const CharSpan s = spans_[w];
      if (s.start < 0) continue;
      if (chars.empty()) chars = unicode::decode(sentence);
      words_[w] = unicode::encode(std::u32string_view(chars).substr(static_cast<std::size_t>(s.start),
                                                                    static_cast<std::size_t>(s.end - s.start)));
    }
  }

 private:
  std::vector<int32_t> index_;  // joined word -> this sentence's word, -1 until met
  std::vector<std::string>& words_;
  std::vector<CharSpan> spans_;  // of shared words: the characters their tokens cover; -1 for the others
};

// Which parts each word of the joined text has tokens in (a bit per Part).
std::vector<uint8_t> word_parts(const SentenceTokens& joined, const std::vector<Part>& parts) {
  std::vector<uint8_t> bits(joined.words.size(), 0);
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (joined.word_index[i] >= 0) bits[static_cast<std::size_t>(joined.word_index[i])] |= 1u << static_cast<int>(parts[i]);
  return bits;
}

// The joined text's tokens given to A, the separator and B, with offsets and words within their sentence.
JoinedTokens split_joined(SentenceTokens joined, std::string_view a, std::string_view b, int64_t a_end, int64_t b_start) {
  JoinedTokens out;
  out.parts.reserve(joined.ids.size());
  const std::vector<Part> parts = token_parts(joined, a_end, b_start);
  const std::vector<uint8_t> bits = word_parts(joined, parts);
  SentenceWords words_a(joined.words.size(), out.words_a), words_b(joined.words.size(), out.words_b);
  for (std::size_t i = 0; i < joined.ids.size(); ++i) {
    const Part part = parts[i];
    CharSpan span = joined.offsets[i];
    if (part == Part::B && span.start >= 0) span = {span.start - b_start, span.end - b_start};
    const int32_t w = joined.word_index[i];
    if (part == Part::Separator || w < 0) {
      out.push(joined, i, part, -1, span);
      continue;
    }
    const auto jw = static_cast<std::size_t>(w);
    const bool shared = bits[jw] != (1u << static_cast<int>(part));
    SentenceWords& words = part == Part::B ? words_b : words_a;
    out.push(joined, i, part, words.add(w, shared, joined.words[jw], span), span);
  }
  words_a.name_shared_words(a);
  words_b.name_shared_words(b);
  return out;
}

void append_part(JoinedTokens& out, SentenceTokens& tokens, Part part) {
  for (std::size_t i = 0; i < tokens.ids.size(); ++i) out.push(tokens, i, part, tokens.word_index[i], tokens.offsets[i]);
}

void add_template_tokens(Encoding& e, const std::vector<TemplateToken>& tokens, uint8_t segment) {
  for (const auto& t : tokens) {
    e.ids.push_back(t.id);
    e.tokens.push_back(t.token);
    e.segment.push_back(segment);
    e.type_ids.push_back(0);
    e.word_index.push_back(-1);
    e.special.push_back(1);
    e.offsets.push_back({});
  }
}

// The single-sentence template around the joined tokens, cut from the end to max_length.
Encoding assemble_joined(JoinedTokens& t, const PairTemplate& pair_template, std::size_t max_length) {
  const std::size_t n_special = pair_template.added(false);
  if (max_length <= n_special)
    throw Error("max_length " + std::to_string(max_length) + " leaves no room for any token");
  const std::size_t kept = std::min(max_length - n_special, t.parts.size());
  Encoding e;
  for (std::size_t i = kept; i < t.parts.size(); ++i) ++(t.parts[i] == Part::B ? e.removed_b : e.removed_a);
  e.truncated = kept < t.parts.size();
  add_template_tokens(e, pair_template.single_prefix, 0);
  for (std::size_t i = 0; i < kept; ++i) {
    const Part part = t.parts[i];
    e.ids.push_back(t.tokens.ids[i]);
    e.tokens.push_back(std::move(t.tokens.pieces[i]));
    e.segment.push_back(part == Part::B ? 1 : 0);
    e.type_ids.push_back(0);
    e.word_index.push_back(t.tokens.word_index[i]);
    e.special.push_back(t.tokens.special[i]);
    e.offsets.push_back(t.tokens.offsets[i]);
    e.tokens_a += part == Part::A ? 1 : 0;
    e.tokens_b += part == Part::B ? 1 : 0;
  }
  add_template_tokens(e, pair_template.single_suffix, 1);  // after B, as the pair template's last tokens
  e.words_a = std::move(t.words_a);
  e.words_b = std::move(t.words_b);
  return e;
}

}  // namespace

void Tokenizer::set_pair_separator(std::string separator) {
  unicode::decode(separator);  // throws naming the byte where it is not UTF-8
  p_.pair_separator = std::move(separator);
}

std::size_t Tokenizer::specials_added(bool pair) const {
  return p_.pair_template.added(pair && p_.pairs == PairEncoding::Template);
}

Encoding Tokenizer::encode_joined(std::string_view a, std::string_view b, std::size_t max_length) const {
  std::string text;
  text.reserve(a.size() + p_.pair_separator.size() + b.size());
  text.append(a).append(p_.pair_separator).append(b);
  SentenceTokens joined = tokenize(text);  // checks the UTF-8 of all three
  const auto a_end = static_cast<int64_t>(unicode::char_count(a));
  const int64_t b_start = a_end + static_cast<int64_t>(unicode::char_count(p_.pair_separator));
  JoinedTokens t = split_joined(std::move(joined), a, b, a_end, b_start);
  return assemble_joined(t, p_.pair_template, max_length ? max_length : static_cast<std::size_t>(p_.config.model_max_length));
}

Encoding Tokenizer::encode_joined_words(const std::vector<std::string>& a, const std::vector<std::string>& b,
                                        std::size_t max_length) const {
  SentenceTokens ta = tokenize_words(a), separator = tokenize(p_.pair_separator), tb = tokenize_words(b);
  JoinedTokens t;
  append_part(t, ta, Part::A);
  append_part(t, separator, Part::Separator);
  append_part(t, tb, Part::B);
  t.words_a = std::move(ta.words);
  t.words_b = std::move(tb.words);
  return assemble_joined(t, p_.pair_template, max_length ? max_length : static_cast<std::size_t>(p_.config.model_max_length));
}

}  // namespace attnscan
