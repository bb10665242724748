// SentencePiece models (read by attnscan: sentencepiece_model.hpp), as transformers' slow
// XLMRobertaTokenizer and AlbertTokenizer (4.40) use them.
#include <utf8proc.h>

#include "common/error.hpp"
#include "tokenizer/files/sentencepiece_model.hpp"
#include "tokenizer/models/subword_model.hpp"
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

std::u32string python_lower(const std::u32string& text) { return unicode::python_lower(text); }

class SentencePieceSlowModel final : public SentencePieceSlow {
 public:
  SentencePieceSlowModel(const std::filesystem::path& model_file, Options options);
  Vocab vocab() const override;
  void set_added(std::vector<SlowAddedToken> added) override { added_ = std::move(added); }
  SentenceTokens tokenize(std::string_view text) const override;

 private:
  std::vector<std::string> pieces(const std::string& text) const;  // _tokenize
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
std::vector<std::string> SentencePieceSlowModel::pieces(const std::string& text_utf8) const {
  std::vector<std::string> out;
  auto encode = [&](const std::string& s) {
    std::vector<std::string> p;
    for (auto& piece : sp_.encode(s)) p.push_back(std::move(piece.first));
    return p;
  };
  if (options_.flavour == Flavour::XlmRoberta) return encode(text_utf8);
  // AlbertTokenizer.preprocess_text
  std::u32string text = unicode::decode(text_utf8);
  if (options_.remove_space) {
    std::u32string joined;
    for (const auto& w : python_split_utf8(text_utf8)) {
      if (!joined.empty()) joined.push_back(U' ');
      joined += unicode::decode(w);
    }
    text.swap(joined);
  }
  for (const std::u32string from : {U"``", U"''"}) {
    std::u32string replaced;
    for (std::size_t i = 0; i < text.size();) {
      if (text.compare(i, 2, from) == 0) {
        replaced.push_back(U'"');
        i += 2;
      } else {
        replaced.push_back(text[i++]);
      }
    }
    text.swap(replaced);
  }
  if (!options_.keep_accents) {
    std::u32string kept;
    for (char32_t c : unicode::nfkd(text))
      if (utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class == 0) kept.push_back(c);
    text.swap(kept);
  }
  if (options_.do_lower_case) text = python_lower(text);
  for (auto& piece : encode(unicode::encode(text))) {
    const std::u32string p = unicode::decode(piece);
    if (p.size() > 1 && p.back() == U',' && python_isdigit(p[p.size() - 2])) {
      // "9," -> "▁9" ","; the digits re-encoded without the space mark
      std::u32string digits;
      for (std::size_t i = 0; i + 1 < p.size(); ++i)
        if (p[i] != kSpaceMark) digits.push_back(p[i]);
      auto cur = encode(unicode::encode(digits));
      if (p[0] != kSpaceMark && !cur.empty() && unicode::decode(cur[0])[0] == kSpaceMark) {
        const std::u32string first = unicode::decode(cur[0]);
        if (first.size() == 1) cur.erase(cur.begin());
        else cur[0] = unicode::encode(first.substr(1));
      }
      cur.push_back(",");
      for (auto& c : cur) out.push_back(std::move(c));
    } else {
      out.push_back(std::move(piece));
    }
  }
  return out;
}

SentenceTokens SentencePieceSlowModel::tokenize(std::string_view text_utf8) const {
  std::u32string text = unicode::decode(text_utf8);
  if (options_.do_lower_case) text = lower_except(text, options_.lowercase_skip);
  SentenceTokens out;
  for (const auto& chunk : split_slow_added(text, added_)) {
    if (chunk.added >= 0) {
      const auto& a = added_[static_cast<std::size_t>(chunk.added)];
      push_added(out, a.content, a.id, a.special);
      continue;
    }
    bool in_word = false;  // a "▁"-initial piece starts a word; a chunk's first piece always does
    for (auto& piece : pieces(unicode::encode(chunk.text))) {
      const std::u32string p = unicode::decode(piece);
      const bool starts = !p.empty() && p[0] == kSpaceMark;
      if (starts || !in_word) {
        out.words.emplace_back();
        in_word = true;
      }
      std::u32string bare;
      for (char32_t c : p)
        if (c != kSpaceMark) bare.push_back(c);
      out.words.back() += unicode::encode(bare);
      const int32_t id = piece_id(piece);
      out.ids.push_back(id);
      out.pieces.push_back(id >= 0 && static_cast<std::size_t>(id) < id_to_token_.size() ? id_to_token_[static_cast<std::size_t>(id)]
                                                                                      : piece);
      out.word_index.push_back(static_cast<int32_t>(out.words.size()) - 1);
      out.special.push_back(0);
    }
  }
  return out;
}

std::shared_ptr<SentencePieceSlow> load_sentencepiece_slow(const std::filesystem::path& model_file,
                                                           SentencePieceSlow::Options options) {
  return std::make_shared<SentencePieceSlowModel>(model_file, std::move(options));
}

}  // namespace attnscan::detail
