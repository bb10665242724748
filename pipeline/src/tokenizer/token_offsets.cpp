#include "tokenizer/token_offsets.hpp"

#include <algorithm>
#include <optional>

#include "tokenizer/pre_tokenizers/byte_level.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan {

namespace {

using namespace unicode;

constexpr char32_t kMetaspace = U'\u2581';

// What one character compares as: NFKD, marks and control characters removed, lowercased; whitespace
// is one space.
std::u32string fold(char32_t c) {
  if (is_whitespace(c) || is_rust_whitespace(c)) return U" ";
  if (is_control(c) || c == 0 || c == 0xFFFD) return {};
  std::u32string out;
  for (char32_t d : nfkd(std::u32string_view(&c, 1))) {
    if (is_nonspacing_mark(d) || is_control(d)) continue;
    if (is_whitespace(d) || is_rust_whitespace(d)) {
      out += U' ';
      continue;
    }
    out += python_lower(std::u32string_view(&d, 1));
  }
  return out;
}

std::u32string fold(std::u32string_view text) {
  std::u32string out;
  for (char32_t c : text) out += fold(c);
  return out;
}

// The sentence as one stream of folded characters, each knowing the sentence character it came from.
struct Stream {
  std::u32string chars;
  std::vector<int64_t> source;
};

// quotes: ALBERT's normaliser replaces "``" and "''" with '"', which HF aligns with the second character.
Stream folded_stream(const std::u32string& text, SubwordKind kind, bool quotes) {
  Stream s;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (quotes && i + 1 < text.size() && (text[i] == U'`' || text[i] == U'\'') && text[i + 1] == text[i]) {
      s.chars += U'"';
      s.source.push_back(static_cast<int64_t>(++i));
      continue;
    }
    // SentencePiece's charsmap turns "\r\n" into one space, which covers both characters.
    if (kind == SubwordKind::Unigram && text[i] == U'\n' && i > 0 && text[i - 1] == U'\r') continue;
    for (char32_t f : fold(text[i])) {
      s.chars += f;
      s.source.push_back(static_cast<int64_t>(i));
    }
  }
  return s;
}

bool matches_at(const std::u32string& stream, std::size_t p, const std::u32string& want) {
  return p + want.size() <= stream.size() && stream.compare(p, want.size(), want) == 0;
}

// The folded text a token must match, per kind; for Unigram a leading space stands for "▁".
std::u32string token_target(const std::string& token, SubwordKind kind) {
  std::u32string t = unicode::decode(token);
  if (kind == SubwordKind::WordPiece && t.size() > 2 && t[0] == U'#' && t[1] == U'#') t.erase(0, 2);
  if (kind == SubwordKind::Unigram)
    for (auto& c : t)
      if (c == kMetaspace) c = U' ';
  return fold(t);
}

SentenceOffsets failed(std::size_t n) {
  SentenceOffsets out;
  out.spans.assign(n, CharSpan{});
  out.aligned = false;
  return out;
}

// Byte-level BPE: the tokens' bytes are the sentence's bytes, in order (specials written in the text
// after optional spaces they strip).
SentenceOffsets byte_level_offsets(std::string_view sentence, const std::vector<std::string>& tokens,
                                   const std::vector<uint8_t>& in_text_special, std::string_view unk) {
  const std::u32string text = unicode::decode(sentence);
  std::vector<int64_t> char_of;  // per byte of the sentence
  std::string bytes;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const std::string b = unicode::encode(std::u32string_view(&text[i], 1));
    bytes += b;
    char_of.insert(char_of.end(), b.size(), static_cast<int64_t>(i));
  }
  auto char_index = [&](std::size_t byte) {
    return byte < char_of.size() ? char_of[byte] : static_cast<int64_t>(text.size());
  };
  SentenceOffsets out;
  std::size_t p = 0;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    const bool special = k < in_text_special.size() && in_text_special[k];
    if (special || tokens[k] == unk) {
      if (tokens[k] == unk && !special) return failed(tokens.size());
      while (p < bytes.size() && (bytes[p] == ' ' || bytes[p] == '\t' || bytes[p] == '\n' || bytes[p] == '\r')) ++p;
      if (bytes.compare(p, tokens[k].size(), tokens[k]) != 0) return failed(tokens.size());
      out.spans.push_back({char_index(p), char_index(p) + static_cast<int64_t>(unicode::decode(tokens[k]).size())});
      p += tokens[k].size();
      continue;
    }
    const std::u32string chars = unicode::decode(tokens[k]);
    const std::string want = detail::chars_to_bytes(chars);
    if (want.empty() || bytes.compare(p, want.size(), want) != 0) return failed(tokens.size());
    std::size_t begin = p, end = p + want.size();
    p = end;
    // trim_offsets: the leading and trailing "Ġ" are not in the span.
    std::size_t lead = 0, trail = 0;
    while (lead < chars.size() && chars[lead] == U'\u0120') ++lead;
    while (trail < chars.size() && chars[chars.size() - 1 - trail] == U'\u0120') ++trail;
    begin = std::min(begin + lead, end);
    end = std::max(end >= trail ? end - trail : 0, begin);
    if (begin == end) out.spans.push_back({char_index(begin), char_index(begin)});
    else out.spans.push_back({char_index(begin), char_index(end - 1) + 1});
  }
  return out;
}

SentenceOffsets folded_offsets(std::string_view sentence, const std::vector<std::string>& tokens,
                               const std::vector<uint8_t>& in_text_special, SubwordKind kind, std::string_view unk,
                               bool cjk_isolated, bool quotes);

}  // namespace

SentenceOffsets sentence_char_offsets(std::string_view sentence, const std::vector<std::string>& tokens,
                                      const std::vector<uint8_t>& in_text_special, SubwordKind kind,
                                      std::string_view unk, bool cjk_isolated) {
  if (kind == SubwordKind::ByteLevelBpe) return byte_level_offsets(sentence, tokens, in_text_special, unk);
  SentenceOffsets out = folded_offsets(sentence, tokens, in_text_special, kind, unk, cjk_isolated, false);
  if (!out.aligned && kind == SubwordKind::Unigram) {  // ALBERT's quotes: aligned only if every token then matches
    SentenceOffsets quoted = folded_offsets(sentence, tokens, in_text_special, kind, unk, cjk_isolated, true);
    if (quoted.aligned) return quoted;
  }
  return out;
}

namespace {

SentenceOffsets folded_offsets(std::string_view sentence, const std::vector<std::string>& tokens,
                               const std::vector<uint8_t>& in_text_special, SubwordKind kind, std::string_view unk,
                               bool cjk_isolated, bool quotes) {
  const std::u32string text = unicode::decode(sentence);
  const Stream s = folded_stream(text, kind, quotes);
  const std::size_t n = s.chars.size();
  auto skip_spaces = [&](std::size_t p) {
    while (p < n && s.chars[p] == U' ') ++p;
    return p;
  };
  // Where token k's folded text starts at or after p (its "▁" handled), or nothing.
  auto place = [&](std::size_t k, std::size_t p, std::size_t& begin, std::size_t& end, bool& empty_lead) {
    const bool special = k < in_text_special.size() && in_text_special[k];
    std::u32string want = special ? fold(unicode::decode(tokens[k])) : token_target(tokens[k], kind);
    empty_lead = false;
    if (kind == SubwordKind::Unigram && !special && !want.empty() && want[0] == U' ') {
      // "▁": the last of the spaces before the piece, or none (the sentence's prepended "▁").
      std::size_t q = skip_spaces(p);
      if (q > p) {
        begin = q - 1;
        want.erase(0, 1);
        if (!matches_at(s.chars, q, want)) return false;
        end = q + want.size();
        return true;
      }
      want.erase(0, 1);
      empty_lead = true;
    } else {
      p = skip_spaces(p);
    }
    if (!matches_at(s.chars, p, want)) return false;
    begin = p;
    end = p + want.size();
    return true;
  };
  SentenceOffsets out;
  std::size_t p = 0;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    const bool special = k < in_text_special.size() && in_text_special[k];
    std::size_t begin = 0, end = 0;
    bool empty_lead = false;
    if (!special && tokens[k] == unk) {
      // The characters up to where the next placeable token starts (or the end), spaces trimmed.
      std::size_t from = kind == SubwordKind::Unigram ? p : skip_spaces(p);
      std::size_t stop = n;
      if (kind == SubwordKind::WordPiece || kind == SubwordKind::WordLevel) {
        // [UNK] is one whole word of the pre-tokenizer: a punctuation character (or a CJK one where the
        // normalizer isolates them), or a run of characters up to whitespace or such a character.
        std::size_t q = skip_spaces(from);
        auto breaks = [&](char32_t c) { return is_punctuation(c) || (cjk_isolated && (is_cjk(c) || is_cjk_tokenizers(c))); };
        if (q < n && breaks(s.chars[q])) {
          const int64_t c = s.source[q];
          while (q < n && s.source[q] == c) ++q;
        } else {
          while (q < n && s.chars[q] != U' ' && !breaks(s.chars[q])) ++q;
        }
        stop = q;
      } else if (k + 1 < tokens.size()) {
        if (tokens[k + 1] == unk) return failed(tokens.size());
        stop = n + 1;
        for (std::size_t q = from + 1; q <= n; ++q) {
          std::size_t b2 = 0, e2 = 0;
          bool lead2 = false;
          if (place(k + 1, q, b2, e2, lead2) && !lead2 && b2 == q && e2 > b2) {
            stop = q;
            break;
          }
        }
        if (stop > n) return failed(tokens.size());
      }
      std::size_t a = skip_spaces(from), z = stop;
      while (z > a && s.chars[z - 1] == U' ') --z;
      if (z <= a) return failed(tokens.size());
      int64_t last = s.source[z - 1] + 1;
      if (kind == SubwordKind::Unigram) {  // HF: up to the next piece, characters normalisation removed included
        last = z < n ? s.source[z] : static_cast<int64_t>(text.size());
        while (last > s.source[a] + 1 && (is_whitespace(text[last - 1]) || is_rust_whitespace(text[last - 1]))) --last;
      }
      out.spans.push_back({s.source[a], last});
      p = stop;
      continue;
    }
    if (!place(k, p, begin, end, empty_lead)) return failed(tokens.size());
    if (special && kind == SubwordKind::Unigram && (tokens[k] == "<mask>" || tokens[k] == "[MASK]"))
      while (begin > p && s.chars[begin - 1] == U' ') --begin;  // added with lstrip: the spaces it took
    if (end == begin) {  // a lone prepended "▁": HF aligns it with the character it was put before
      const int64_t at = begin < n ? s.source[begin] : static_cast<int64_t>(text.size());
      out.spans.push_back({at, begin < n ? at + 1 : at});
    } else {
      out.spans.push_back({s.source[begin], s.source[end - 1] + 1});
    }
    p = end;
  }
  return out;
}

}  // namespace

std::vector<CharSpan> encoding_char_offsets(const Encoding& enc, std::string_view a, std::string_view b,
                                            const Tokenizer& tokenizer, int* unaligned) {
  const SubwordKind kind = tokenizer.kind();
  const std::string_view unk = tokenizer.config().unk_token;
  std::vector<CharSpan> out(enc.size());
  for (int seg = 0; seg < 2; ++seg) {
    std::vector<std::size_t> at;
    std::vector<std::string> tokens;
    std::vector<uint8_t> special;
    for (std::size_t t = 0; t < enc.size(); ++t) {
      if (enc.segment[t] != seg || (enc.special[t] && enc.word_index[t] < 0)) continue;  // template specials
      at.push_back(t);
      tokens.push_back(enc.tokens[t]);
      special.push_back(enc.special[t]);
    }
    if (tokens.empty()) continue;
    const std::string_view sentence = seg == 0 ? a : b;
    SentenceOffsets s;
    bool done = false;
    if ((seg == 0 ? enc.removed_a : enc.removed_b) > 0) {
      // Truncated: align all of the sentence's tokens, so that the last kept one (an <unk> in particular)
      // ends where the first removed one starts.
      const SentenceTokens full = tokenizer.tokenize(sentence);
      if (full.pieces.size() >= tokens.size() && std::equal(tokens.begin(), tokens.end(), full.pieces.begin())) {
        s = sentence_char_offsets(sentence, full.pieces, full.special, kind, unk, tokenizer.cjk_isolated());
        s.spans.resize(tokens.size());
        done = true;
      }
    }
    if (!done) s = sentence_char_offsets(sentence, tokens, special, kind, unk, tokenizer.cjk_isolated());
    if (!s.aligned && unaligned) ++*unaligned;
    for (std::size_t i = 0; i < at.size(); ++i) out[at[i]] = s.spans[i];
  }
  return out;
}

}  // namespace attnscan
