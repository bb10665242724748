#include "tokenizer/fast_text.hpp"

#include "tokenizer/pre_tokenizers/byte_level.hpp"
#include "tokenizer/normalizers/precompiled_charsmap.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

std::u32string drop_nonspacing_marks(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text)
    if (!unicode::is_nonspacing_mark(c)) out.push_back(c);
  return out;
}

// The StripAccents normalizer drops every combining mark (Mn, Mc, Me), unlike BertNormalizer (Mn only).
std::u32string drop_combining_marks(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text)
    if (unicode::category(c)[0] != 'M') out.push_back(c);
  return out;
}

// tokenizers' BertNormalizer: clean, CJK spacing, then accents, then lowercase; no NFC.
std::u32string bert_normalize(const NormalizerStep& s, std::u32string text) {
  if (s.clean_text) {
    std::u32string out;
    out.reserve(text.size());
    for (char32_t c : text) {
      if (c == 0 || c == 0xFFFD || unicode::is_control(c)) continue;  // filter first, then map
      out.push_back(c == U'\t' || c == U'\n' || c == U'\r' || unicode::is_rust_whitespace(c) ? U' ' : c);
    }
    text.swap(out);
  }
  if (s.handle_chinese_chars) {
    std::u32string out;
    out.reserve(text.size());
    for (char32_t c : text) {
      if (unicode::is_cjk_tokenizers(c)) {
        out.push_back(U' ');
        out.push_back(c);
        out.push_back(U' ');
      } else {
        out.push_back(c);
      }
    }
    text.swap(out);
  }
  if (s.strip_accents.value_or(s.lowercase)) text = drop_nonspacing_marks(unicode::nfd(text));
  if (s.lowercase) text = unicode::lower_each_char(text);
  return text;
}

bool is_bert_punctuation(char32_t c) { return unicode::is_punctuation(c); }  // ASCII punct. or P*

// Splits every piece: whitespace removed, then (Bert) punctuation isolated.
void split_pieces(std::vector<std::u32string>& pieces, bool (*is_delim)(char32_t), bool isolate) {
  std::vector<std::u32string> out;
  out.reserve(pieces.size());
  for (const auto& p : pieces) {
    std::u32string cur;
    for (char32_t c : p) {
      if (!is_delim(c)) {
        cur.push_back(c);
        continue;
      }
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
      if (isolate) out.emplace_back(1, c);
    }
    if (!cur.empty()) out.push_back(std::move(cur));
  }
  pieces.swap(out);
}

// NormalizedString::replace: every leftmost, non-overlapping match replaced by `content`.
std::u32string replace(const NormalizerStep& s, const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t len = 0;
    if (!s.find.empty()) {
      if (text.compare(i, s.find.size(), s.find) == 0) len = s.find.size();
    } else {
      while (i + len < text.size() && text[i + len] == s.repeat_char && (s.max_repeat == 0 || len < s.max_repeat)) ++len;
      if (len < s.min_repeat) len = 0;
    }
    if (len == 0) {
      out.push_back(text[i++]);
      continue;
    }
    out += s.content;
    i += len;
  }
  return out;
}

std::u32string strip(const NormalizerStep& s, const std::u32string& text) {
  std::size_t b = 0, e = text.size();
  if (s.strip_left)
    while (b < e && unicode::is_rust_whitespace(text[b])) ++b;
  if (s.strip_right)
    while (e > b && unicode::is_rust_whitespace(text[e - 1])) --e;
  return text.substr(b, e - b);
}

// ByteLevel: a space first (add_prefix_space), GPT-2's split pattern (use_regex), bytes as characters.
void byte_level(const PreTokenizerStep& s, std::vector<std::u32string>& pieces) {
  std::vector<std::u32string> out;
  for (auto& p : pieces) {
    if (s.add_prefix_space && !p.empty() && p[0] != U' ') p.insert(p.begin(), U' ');
    if (!s.use_regex) {
      out.push_back(bytes_to_chars(unicode::encode(p)));
      continue;
    }
    for (const auto& [b, e] : gpt2_split(p))
      out.push_back(bytes_to_chars(unicode::encode(std::u32string_view(p.data() + b, e - b))));
  }
  pieces.swap(out);
}

// Metaspace: spaces become the replacement, which is prepended and then starts every piece.
void metaspace(const PreTokenizerStep& s, std::vector<std::u32string>& pieces, bool at_start) {
  std::vector<std::u32string> out;
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    auto p = pieces[k];
    for (auto& c : p)
      if (c == U' ') c = s.replacement;
    using P = PreTokenizerStep::Prepend;
    const bool prepend = s.prepend == P::Always || (s.prepend == P::First && at_start && k == 0);
    if (prepend && !p.empty() && p[0] != s.replacement) p.insert(p.begin(), s.replacement);
    if (!s.split) {
      if (!p.empty()) out.push_back(std::move(p));
      continue;
    }
    std::size_t begin = 0;  // MergedWithNext: each replacement starts a piece
    for (std::size_t i = 1; i <= p.size(); ++i) {
      if (i == p.size() || p[i] == s.replacement) {
        out.push_back(p.substr(begin, i - begin));
        begin = i;
      }
    }
  }
  pieces.swap(out);
}

}  // namespace

std::u32string normalize(const std::vector<NormalizerStep>& steps, std::u32string text) {
  using K = NormalizerStep::Kind;
  for (const auto& s : steps) {
    switch (s.kind) {
      case K::Bert: text = bert_normalize(s, std::move(text)); break;
      case K::NFC: text = unicode::nfc(text); break;
      case K::NFD: text = unicode::nfd(text); break;
      case K::NFKC: text = unicode::nfkc(text); break;
      case K::NFKD: text = unicode::nfkd(text); break;
      case K::Lowercase: text = unicode::lower_each_char(text); break;
      case K::StripAccents: text = drop_combining_marks(text); break;  // Mn, Mc and Me; no NFD (as tokenizers)
      case K::Precompiled: text = s.charsmap->normalize(text); break;
      case K::Replace: text = replace(s, text); break;
      case K::Strip: text = strip(s, text); break;
    }
  }
  return text;
}

std::vector<std::u32string> pre_tokenize(const std::vector<PreTokenizerStep>& steps, const std::u32string& text,
                                         bool at_start) {
  std::vector<std::u32string> pieces;
  if (!text.empty()) pieces.push_back(text);
  using K = PreTokenizerStep::Kind;
  for (const auto& s : steps) {
    if (s.kind == K::ByteLevel) {
      byte_level(s, pieces);
    } else if (s.kind == K::Metaspace) {
      metaspace(s, pieces, at_start);
    } else {
      split_pieces(pieces, &unicode::is_rust_whitespace, false);
      if (s.kind == K::Bert) split_pieces(pieces, &is_bert_punctuation, true);
    }
  }
  return pieces;
}

namespace {

// Leftmost-longest matches of `tokens` (those with normalized == want_normalized) in `text`, as the
// aho-corasick automaton of tokenizers' AddedVocabulary finds them, with lstrip/rstrip applied.
struct Match {
  std::size_t start, stop;
  int added;
};

std::vector<Match> find_added(const FastPipeline& p, const std::u32string& text, bool normalized) {
  std::vector<Match> out;
  std::size_t i = 0, last_stop = 0;
  while (i < text.size()) {
    int hit = -1;
    std::size_t hit_len = 0;
    for (std::size_t k = 0; k < p.added.size(); ++k) {
      const auto& t = p.added[k];
      if (t.normalized != normalized || t.pattern.empty() || t.pattern.size() <= hit_len) continue;
      if (text.compare(i, t.pattern.size(), t.pattern) == 0) {
        hit = static_cast<int>(k);
        hit_len = t.pattern.size();
      }
    }
    if (hit < 0) {
      ++i;
      continue;
    }
    const auto& t = p.added[static_cast<std::size_t>(hit)];
    std::size_t start = i, stop = i + hit_len;
    if (t.lstrip)
      while (start > last_stop && unicode::is_rust_whitespace(text[start - 1])) --start;
    if (t.rstrip)
      while (stop < text.size() && unicode::is_rust_whitespace(text[stop])) ++stop;
    out.push_back({start, stop, hit});
    last_stop = stop;
    i = stop;
  }
  return out;
}

void split_by(const FastPipeline& p, const std::u32string& text, bool normalized, std::vector<TextPiece>& out) {
  std::size_t pos = 0;
  auto gap = [&](std::size_t end) {
    if (end <= pos) return;
    std::u32string piece = text.substr(pos, end - pos);
    if (normalized) {
      out.push_back({-1, std::move(piece)});
    } else {  // normalize the gap, then look for the normalized added tokens in it
      split_by(p, normalize(p.normalizers, std::move(piece)), true, out);
    }
  };
  for (const auto& m : find_added(p, text, normalized)) {
    gap(m.start);
    out.push_back({m.added, {}});
    pos = m.stop;
  }
  gap(text.size());
}

}  // namespace

std::vector<TextPiece> split_added_tokens(const FastPipeline& p, const std::u32string& raw) {
  std::vector<TextPiece> out;
  split_by(p, raw, false, out);
  return out;
}

}  // namespace attnscan::detail
