// SentencePiece models (read by attnscan: sentencepiece_model.hpp), as transformers' slow
// XLMRobertaTokenizer and AlbertTokenizer (4.40) use them.
#include <algorithm>

#include <utf8proc.h>

#include "common/error.hpp"
#include "tokenizer/files/sentencepiece_model.hpp"
#include "tokenizer/models/subword_model.hpp"
#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

constexpr char32_t kSpaceMark = U'\u2581';  // "▁"

// Python's str.isdigit(): decimal digits (Nd) and the other characters of Numeric_Type Digit.
bool python_isdigit(char32_t c) {
  if (unicode::category(c)[0] == 'N' && unicode::category(c)[1] == 'd') return true;
  return c == 0xB2 || c == 0xB3 || c == 0xB9 || c == 0x2070 || (c >= 0x2074 && c <= 0x2079) ||
         (c >= 0x2080 && c <= 0x2089) || (c >= 0x2460 && c <= 0x2468) || (c >= 0x2474 && c <= 0x247C) ||
         (c >= 0x2488 && c <= 0x2490) || c == 0x24EA || (c >= 0x24F5 && c <= 0x24FD) || c == 0x24FF ||
         (c >= 0x2776 && c <= 0x277E) || (c >= 0x2780 && c <= 0x2788) || (c >= 0x278A && c <= 0x2792) ||
         (c >= 0x1F100 && c <= 0x1F10A) || c == 0x1369 || (c >= 0x136A && c <= 0x1371) || c == 0x19DA;
}

// AlbertTokenizer's " ".join(text.strip().split()): each run of whitespace one space, aligned with the
// run's last grapheme ("\r\n" is one), as the fast tokenizer's per-grapheme charsmap and then its
// Replace(" {2,}", " ") align it; none at the end, and
// none at the start unless `keep_leading`: then the leading run's space stays for SentencePiece's
// normalizer to remove and give its span to the dummy prefix (as Metaspace turns that space into it).
void collapse_spaces(NormalizedText& text, bool keep_leading) {
  const std::u32string& t = text.text();
  std::vector<CharChange> changes;
  std::size_t skip = 0;
  for (std::size_t i = 0; i < t.size();) {
    if (!unicode::is_python_space(t[i])) {
      changes.push_back({t[i++], 0, skip});
      skip = 0;
      continue;
    }
    std::size_t j = i;
    while (j < t.size() && unicode::is_python_space(t[j])) ++j;
    if ((changes.empty() && !keep_leading) || j == t.size()) {
      skip += j - i;
    } else {
      std::size_t g = j - 1;  // where the run's last grapheme starts
      while (g > i && !utf8proc_grapheme_break(static_cast<utf8proc_int32_t>(t[g - 1]), static_cast<utf8proc_int32_t>(t[g])))
        --g;
      changes.push_back({U' ', -static_cast<int>(j - 1 - g), skip + (g - i)});
      skip = 0;
    }
    i = j;
  }
  text.transform(changes);
}

// A piece of the slow tokenizer's _tokenize and the characters of the sentence it covers.
struct SpanPiece {
  std::string piece;
  CharSpan span;
};

class SentencePieceSlowModel final : public SentencePieceSlow {
 public:
  SentencePieceSlowModel(const std::filesystem::path& model_file, Options options);
  Vocab vocab() const override;
  void set_added(std::vector<SlowAddedToken> added) override { added_ = with_patterns(std::move(added)); }
  SentenceTokens tokenize(std::string_view text) const override;

 private:
  std::vector<SpanPiece> pieces(NormalizedText text) const;  // _tokenize
  int32_t piece_id(const std::string& piece) const;

  SentencePieceModel sp_;
  Options options_;
  std::vector<SlowAddedToken> added_;
  std::vector<std::string> id_to_token_;
};

}  // namespace

SentencePieceSlowModel::SentencePieceSlowModel(const std::filesystem::path& model_file, Options options)
    : sp_(SentencePieceModel::load(model_file)), options_(std::move(options)) {
  const int n = sp_.size();
  if (options_.flavour == Flavour::XlmRoberta) {
    id_to_token_.resize(static_cast<std::size_t>(n) + 2);
    for (int i = 0; i < n; ++i) id_to_token_[static_cast<std::size_t>(i) + 1] = sp_.id_to_piece(i);
    id_to_token_[0] = "<s>";
    id_to_token_[1] = "<pad>";
    id_to_token_[2] = "</s>";
    id_to_token_[3] = "<unk>";
    id_to_token_[static_cast<std::size_t>(n) + 1] = "<mask>";
  } else {
    for (int i = 0; i < n; ++i) id_to_token_.push_back(sp_.id_to_piece(i));
  }
}

Vocab SentencePieceSlowModel::vocab() const {
  std::vector<std::pair<std::string, int32_t>> entries;
  const int n = sp_.size();
  if (options_.flavour == Flavour::XlmRoberta) {  // fairseq's names win over SentencePiece's pieces
    for (int i = 0; i < n; ++i) entries.emplace_back(sp_.id_to_piece(i), i + 1);
    for (int32_t id : {0, 1, 2, 3, n + 1}) entries.emplace_back(id_to_token_[static_cast<std::size_t>(id)], id);
  } else {
    for (int i = 0; i < n; ++i) entries.emplace_back(sp_.id_to_piece(i), i);
  }
  return Vocab(entries);
}

int32_t SentencePieceSlowModel::piece_id(const std::string& piece) const {
  for (const auto& a : added_)  // convert_tokens_to_ids: the added tokens first
    if (a.content == piece) return a.id;
  if (options_.flavour == Flavour::XlmRoberta) {
    if (piece == "<s>") return 0;
    if (piece == "<pad>") return 1;
    if (piece == "</s>") return 2;
    if (piece == "<unk>") return 3;
    const int id = sp_.piece_to_id(piece);
    return id ? id + 1 : 3;  // SentencePiece's unknown (0) is fairseq's <unk>
  }
  return sp_.piece_to_id(piece);
}

// The slow tokenizer's _tokenize of one chunk of text (added tokens already split out).
std::vector<SpanPiece> SentencePieceSlowModel::pieces(NormalizedText text) const {
  auto encode = [&](NormalizedText t) {
    std::vector<SpanPiece> p;
    for (auto& piece : sp_.encode(std::move(t))) p.push_back({std::move(piece.piece), piece.span});
    return p;
  };
  if (options_.flavour == Flavour::XlmRoberta) return encode(std::move(text));
  if (options_.flavour == Flavour::Deberta) {  // DebertaV2Tokenizer._tokenize: lower(), then SentencePiece
    if (options_.do_lower_case) python_lowercase(text);
    // SentencePiece drops the whitespace at either end; stripped first, it is not part of the first
    // piece's characters (as DeBERTa's tokenizer.json, whose Strip normalizer runs first)
    NormalizerStep ends;
    ends.kind = NormalizerStep::Kind::Strip;
    ends.strip_left = ends.strip_right = true;
    strip(ends, text);
    return encode(std::move(text));
  }
  // AlbertTokenizer.preprocess_text
  if (options_.remove_space) collapse_spaces(text, sp_.removes_extra_whitespaces());
  for (const std::u32string from : {U"``", U"''"}) {
    NormalizerStep quotes;
    quotes.kind = NormalizerStep::Kind::Replace;
    quotes.find = from;
    quotes.content = U"\"";
    replace(quotes, text);
  }
  if (!options_.keep_accents) {
    unicode_form(UnicodeForm::NFKD, text);
    text.filter([](char32_t c) { return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class == 0; });
  }
  if (options_.do_lower_case) python_lowercase(text);
  std::vector<SpanPiece> out;
  for (auto& sp : encode(std::move(text))) {
    const std::u32string p = unicode::decode(sp.piece);
    if (p.size() > 1 && p.back() == U',' && python_isdigit(p[p.size() - 2])) {
      // "9," -> "▁9" ","; the digits re-encoded without the space mark, each given its characters of the
      // piece's span in order (the fast tokenizer has no such split to follow)
      std::u32string digits;
      for (std::size_t i = 0; i + 1 < p.size(); ++i)
        if (p[i] != kSpaceMark) digits.push_back(p[i]);
      std::vector<std::string> cur;
      for (auto& c : sp_.encode(unicode::encode(digits))) cur.push_back(std::move(c.first));
      if (p[0] != kSpaceMark && !cur.empty() && unicode::decode(cur[0])[0] == kSpaceMark) {
        const std::u32string first = unicode::decode(cur[0]);
        if (first.size() == 1) cur.erase(cur.begin());
        else cur[0] = unicode::encode(first.substr(1));
      }
      int64_t at = std::max(sp.span.start, sp.span.end - 1 - static_cast<int64_t>(digits.size()));
      for (auto& c : cur) {
        std::size_t n = 0;
        for (char32_t ch : unicode::decode(c)) n += ch != kSpaceMark;
        const int64_t end = std::min(at + static_cast<int64_t>(n), sp.span.end - 1);
        out.push_back({std::move(c), {at, end}});
        at = end;
      }
      out.push_back({",", {sp.span.end - 1, sp.span.end}});
    } else {
      out.push_back(std::move(sp));
    }
  }
  return out;
}

SentenceTokens SentencePieceSlowModel::tokenize(std::string_view text_utf8) const {
  NormalizedText text(unicode::decode(text_utf8));
  if (options_.do_lower_case) lower_except(text, options_.lowercase_skip);
  SentenceTokens out;
  for (auto& chunk : split_slow_added(text, added_)) {
    if (chunk.added >= 0) {
      const auto& a = added_[static_cast<std::size_t>(chunk.added)];
      push_added(out, a.content, a.id, a.special, chunk.text.original(0, chunk.text.size()));
      continue;
    }
    bool in_word = false;  // a "▁"-initial piece starts a word; a chunk's first piece always does
    static const std::string mark = unicode::encode(std::u32string(1, kSpaceMark));
    for (auto& sp : pieces(std::move(chunk.text))) {
      const std::string_view piece = sp.piece;
      if (piece.substr(0, mark.size()) == mark || !in_word) {
        out.words.emplace_back();
        in_word = true;
      }
      for (std::size_t at = 0; at < piece.size();) {  // the piece's text without its space marks
        const std::size_t next = std::min(piece.find(mark, at), piece.size());
        out.words.back().append(piece, at, next - at);
        at = next == piece.size() ? next : next + mark.size();
      }
      const int32_t id = piece_id(sp.piece);
      const bool known = id >= 0 && static_cast<std::size_t>(id) < id_to_token_.size();
      out.push(id, known ? id_to_token_[static_cast<std::size_t>(id)] : sp.piece,
               static_cast<int32_t>(out.words.size()) - 1, false, sp.span);
    }
  }
  return out;
}

std::shared_ptr<SentencePieceSlow> load_sentencepiece_slow(const std::filesystem::path& model_file,
                                                           SentencePieceSlow::Options options) {
  return std::make_shared<SentencePieceSlowModel>(model_file, std::move(options));
}

}  // namespace attnscan::detail
