// SentencePiece `*.model` files: the protobuf wire format read by hand, and the Unigram encoder as
// sentencepiece 0.2.0 runs it (see sentencepiece_model.hpp).
#include "tokenizer/files/sentencepiece_model.hpp"

#include <cfloat>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <utf8proc.h>

#include "common/error.hpp"
#include "tokenizer/normalizers/precompiled_charsmap.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

// ---------------------------------------------------------------------------------------------
// The protobuf wire format: (field << 3 | wire type) varint keys; wire types 0 varint, 1 fixed64,
// 2 length-delimited, 5 fixed32 (3/4, groups, are not in this proto and are refused).
namespace {

class WireReader {
 public:
  WireReader(std::string_view bytes, const std::string& file, std::string where)
      : data_(bytes), file_(file), where_(std::move(where)) {}
  bool done() const { return pos_ >= data_.size(); }

  [[noreturn]] void fail(const std::string& what) const {
    throw ModelError(file_ + ": not a SentencePiece model: " + where_ + ": " + what + " (at byte " +
                     std::to_string(pos_) + " of " + std::to_string(data_.size()) + ")");
  }

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) fail("a varint runs past the end (truncated file?)");
      const auto b = static_cast<unsigned char>(data_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("a varint longer than 10 bytes");
  }

  // The next field's key: (field number, wire type).
  std::pair<uint32_t, int> key() {
    const uint64_t k = varint();
    const auto field = k >> 3;
    if (field == 0 || field > 0x1FFFFFFF) fail("field number " + std::to_string(field));
    return {static_cast<uint32_t>(field), static_cast<int>(k & 7)};
  }

  std::string_view bytes() {
    const uint64_t n = varint();
    if (n > data_.size() - pos_)
      fail("a " + std::to_string(n) + "-byte field runs past the end (truncated file?)");
    const auto out = data_.substr(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }

  float fixed32_float() {
    if (data_.size() - pos_ < 4) fail("a 4-byte field runs past the end (truncated file?)");
    const auto* b = reinterpret_cast<const unsigned char*>(data_.data() + pos_);
    const uint32_t bits = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
    pos_ += 4;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }

  void skip(int wire_type) {
    switch (wire_type) {
      case 0: varint(); return;
      case 1:
        if (data_.size() - pos_ < 8) fail("an 8-byte field runs past the end (truncated file?)");
        pos_ += 8;
        return;
      case 2: bytes(); return;
      case 5: fixed32_float(); return;
      default: fail("wire type " + std::to_string(wire_type) + " (not used by ModelProto)");
    }
  }

  // Asserts the wire type of a known field.
  void expect(int wire_type, int wanted, const char* field) const {
    if (wire_type != wanted)
      fail(std::string("field ") + field + " has wire type " + std::to_string(wire_type) + ", not " +
           std::to_string(wanted));
  }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
  const std::string& file_;
  std::string where_;
};

void parse_piece(std::string_view bytes, const std::string& file, std::size_t index, SentencePieceProto::Piece& p) {
  WireReader r(bytes, file, "pieces[" + std::to_string(index) + "]");
  while (!r.done()) {
    const auto [field, wire] = r.key();
    switch (field) {
      case 1: r.expect(wire, 2, "piece"); p.piece = std::string(r.bytes()); break;
      case 2: r.expect(wire, 5, "score"); p.score = r.fixed32_float(); break;
      case 3: r.expect(wire, 0, "type"); p.type = static_cast<int>(static_cast<int32_t>(r.varint())); break;
      default: r.skip(wire);
    }
  }
}

void parse_trainer_spec(std::string_view bytes, const std::string& file, SentencePieceProto& m) {
  WireReader r(bytes, file, "trainer_spec");
  while (!r.done()) {
    const auto [field, wire] = r.key();
    switch (field) {
      case 3: r.expect(wire, 0, "model_type"); m.model_type = static_cast<int>(static_cast<int32_t>(r.varint())); break;
      case 24: r.expect(wire, 0, "treat_whitespace_as_suffix"); m.treat_whitespace_as_suffix = r.varint() != 0; break;
      case 35: r.expect(wire, 0, "byte_fallback"); m.byte_fallback = r.varint() != 0; break;
      default: r.skip(wire);
    }
  }
}

void parse_normalizer_spec(std::string_view bytes, const std::string& file, SentencePieceProto& m) {
  WireReader r(bytes, file, "normalizer_spec");
  while (!r.done()) {
    const auto [field, wire] = r.key();
    switch (field) {
      case 1: r.expect(wire, 2, "name"); m.normalizer_name = std::string(r.bytes()); break;
      case 2: r.expect(wire, 2, "precompiled_charsmap"); m.precompiled_charsmap = std::string(r.bytes()); break;
      case 3: r.expect(wire, 0, "add_dummy_prefix"); m.add_dummy_prefix = r.varint() != 0; break;
      case 4: r.expect(wire, 0, "remove_extra_whitespaces"); m.remove_extra_whitespaces = r.varint() != 0; break;
      case 5: r.expect(wire, 0, "escape_whitespaces"); m.escape_whitespaces = r.varint() != 0; break;
      case 6: r.expect(wire, 2, "normalization_rule_tsv"); m.normalization_rule_tsv = std::string(r.bytes()); break;
      default: r.skip(wire);
    }
  }
}

}  // namespace

SentencePieceProto parse_sentencepiece_proto(std::string_view bytes, const std::string& file) {
  SentencePieceProto m;
  WireReader r(bytes, file, "ModelProto");
  while (!r.done()) {
    const auto [field, wire] = r.key();
    switch (field) {
      case 1:
        r.expect(wire, 2, "pieces");
        m.pieces.emplace_back();
        parse_piece(r.bytes(), file, m.pieces.size() - 1, m.pieces.back());
        break;
      case 2: r.expect(wire, 2, "trainer_spec"); parse_trainer_spec(r.bytes(), file, m); break;
      case 3: r.expect(wire, 2, "normalizer_spec"); parse_normalizer_spec(r.bytes(), file, m); break;
      default: r.skip(wire);  // self_test_data (4), denormalizer_spec (5: decoding only)
    }
  }
  if (m.pieces.empty()) throw ModelError(file + ": not a SentencePiece model: no pieces (field 1 of ModelProto)");
  return m;
}

// ---------------------------------------------------------------------------------------------
// ---------------------------------------------------------------------------------------------
namespace {

// string_util::DecodeUTF8's length of a valid character at the start of `s`, 0 when malformed.
std::size_t valid_utf8_len(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto trail = [&](std::size_t i) { return (b(i) & 0xC0) == 0x80; };
  const auto valid = [](uint32_t cp) { return cp < 0xD800 || (cp >= 0xE000 && cp <= 0x10FFFF); };
  if (b(0) < 0x80) return 1;
  if (s.size() >= 2 && (b(0) & 0xE0) == 0xC0) {
    const uint32_t cp = ((b(0) & 0x1Fu) << 6) | (b(1) & 0x3Fu);
    return trail(1) && cp >= 0x80 && valid(cp) ? 2 : 0;
  }
  if (s.size() >= 3 && (b(0) & 0xF0) == 0xE0) {
    const uint32_t cp = ((b(0) & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
    return trail(1) && trail(2) && cp >= 0x800 && valid(cp) ? 3 : 0;
  }
  if (s.size() >= 4 && (b(0) & 0xF8) == 0xF0) {
    const uint32_t cp = ((b(0) & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu);
    return trail(1) && trail(2) && trail(3) && cp >= 0x10000 && valid(cp) ? 4 : 0;
  }
  return 0;
}

constexpr float kUnkPenalty = 10.0f;  // unigram_model.cc
constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";

}  // namespace

SentencePieceModel::SentencePieceModel(SentencePieceProto proto, const std::string& file) {
  auto unsupported = [&](const std::string& what) {
    throw ModelError(file + ": " + what + " is not supported yet (attnscan reads SentencePiece Unigram models)");
  };
  if (proto.model_type != 1) {
    const char* names[] = {"?", "UNIGRAM", "BPE", "WORD", "CHAR"};
    unsupported(std::string("trainer_spec.model_type ") +
                (proto.model_type >= 1 && proto.model_type <= 4 ? names[proto.model_type] : std::to_string(proto.model_type).c_str()));
  }
  if (proto.byte_fallback) unsupported("trainer_spec.byte_fallback true");
  if (proto.treat_whitespace_as_suffix) unsupported("trainer_spec.treat_whitespace_as_suffix true");
  if (!proto.normalization_rule_tsv.empty() && proto.precompiled_charsmap.empty())
    unsupported("normalizer_spec.normalization_rule_tsv without a precompiled_charsmap");
  if (!proto.precompiled_charsmap.empty()) {
    try {
      charsmap_ = std::make_shared<PrecompiledCharsmap>(proto.precompiled_charsmap);
    } catch (const std::runtime_error& e) {
      throw ModelError(file + ": not a SentencePiece model: normalizer_spec." + e.what());
    }
  }
  add_dummy_prefix_ = proto.add_dummy_prefix;
  remove_extra_whitespaces_ = proto.remove_extra_whitespaces;
  escape_whitespaces_ = proto.escape_whitespaces;

  // ModelInterface::InitializePieces and unigram::Model::Model.
  pieces_ = std::move(proto.pieces);
  min_score_ = FLT_MAX;
  max_score_ = FLT_MIN;
  bool any_in_trie = false;
  for (std::size_t i = 0; i < pieces_.size(); ++i) {
    const auto& p = pieces_[i];
    const auto id = static_cast<int32_t>(i);
    const std::string where = "pieces[" + std::to_string(i) + "]";
    if (p.piece.empty()) throw ModelError(file + ": not a SentencePiece model: " + where + " is empty");
    if (p.type < SentencePieceProto::Normal || p.type > SentencePieceProto::Byte)
      throw ModelError(file + ": not a SentencePiece model: " + where + " has type " + std::to_string(p.type));
    if (p.type == SentencePieceProto::Byte) unsupported(where + ": a BYTE piece (byte_fallback)");
    const bool normal = p.type == SentencePieceProto::Normal || p.type == SentencePieceProto::UserDefined ||
                        p.type == SentencePieceProto::Unused;
    if (!(normal ? normal_ : reserved_).emplace(p.piece, id).second)
      throw ModelError(file + ": not a SentencePiece model: " + where + " '" + p.piece + "' is already defined");
    if (p.type == SentencePieceProto::Unknown) {
      if (unk_id_ >= 0) throw ModelError(file + ": not a SentencePiece model: " + where + ": a second unknown piece");
      unk_id_ = id;
    }
    if (p.type == SentencePieceProto::UserDefined) user_.insert(p.piece, id);
    if (p.type == SentencePieceProto::Normal) {
      min_score_ = std::min(min_score_, p.score);
      max_score_ = std::max(max_score_, p.score);
    }
    if (normal) {
      trie_.insert(p.piece, id);
      any_in_trie = true;
    }
  }
  if (unk_id_ < 0) throw ModelError(file + ": not a SentencePiece model: no piece of type UNKNOWN");
  if (!any_in_trie) throw ModelError(file + ": not a SentencePiece model: no normal pieces");
}

SentencePieceModel SentencePieceModel::load(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ModelError(file.string() + ": cannot be opened");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ModelError(file.string() + ": cannot be read");
  return SentencePieceModel(parse_sentencepiece_proto(bytes, file.string()), file.string());
}

int32_t SentencePieceModel::piece_to_id(const std::string& piece) const {
  if (auto it = reserved_.find(piece); it != reserved_.end()) return it->second;
  if (auto it = normal_.find(piece); it != normal_.end()) return it->second;
  return unk_id_;
}

// Normalizer::Normalize with NormalizePrefix: a user-defined piece passes whole, else the charsmap's
// longest rule, else one character (a malformed byte becomes U+FFFD). `emit(out, consumed)`: the
// output bytes for `consumed` input bytes, in order (out may be empty: dropped spaces); the dummy
// prefix is emitted with consumed 0 before them. Trailing spaces are the caller's to remove.
template <typename Emit>
void SentencePieceModel::walk_normalizer(std::string_view input, Emit&& emit) const {
  auto prefix = [&](std::string_view in) -> std::pair<std::string_view, std::size_t> {
    if (!user_.empty())
      if (const std::size_t n = user_.longest_prefix(in)) return {in.substr(0, n), n};
    if (charsmap_)
      if (auto r = charsmap_->longest_prefix(in); r.second > 0) return r;
    if (const std::size_t n = valid_utf8_len(in)) return {in.substr(0, n), n};
    return {"\xEF\xBF\xBD", 1};
  };
  if (input.empty()) return;
  if (remove_extra_whitespaces_) {
    while (!input.empty()) {
      const auto p = prefix(input);
      if (p.first != " ") break;
      emit(std::string_view(), p.second);
      input.remove_prefix(p.second);
    }
  }
  if (input.empty()) return;
  const std::string_view space = escape_whitespaces_ ? kSpaceSymbol : std::string_view(" ");
  if (add_dummy_prefix_) emit(space, 0);
  bool prev_space = remove_extra_whitespaces_;
  std::string out;
  while (!input.empty()) {
    const auto p = prefix(input);
    std::string_view sp = p.first;
    while (prev_space && !sp.empty() && sp.front() == ' ') sp.remove_prefix(1);
    out.clear();
    for (char c : sp) {
      if (escape_whitespaces_ && c == ' ') out += space;
      else out.push_back(c);
    }
    if (!sp.empty()) prev_space = sp.back() == ' ';
    emit(std::string_view(out), p.second);
    input.remove_prefix(p.second);
    if (!remove_extra_whitespaces_) prev_space = false;
  }
}

std::string SentencePieceModel::normalize(std::string_view input) const {
  std::string out;
  walk_normalizer(input, [&](std::string_view piece, std::size_t) { out += piece; });
  if (remove_extra_whitespaces_ && !out.empty()) {
    const std::string_view space = escape_whitespaces_ ? kSpaceSymbol : std::string_view(" ");
    while (out.size() >= space.size() && std::string_view(out).substr(out.size() - space.size()) == space)
      out.resize(out.size() - space.size());
  }
  return out;
}

// The alignment follows the `tokenizers` crate's (as HF's fast tokenizer of the model aligns): a
// replacement's characters replace the consumed ones one for one, extra ones are inserted, the last
// removes any left over; a run of spaces leaves the space of its last grapheme (a Replace of " {2,}"
// after the per-grapheme charsmap); the dummy prefix goes with the last leading space removed (the space
// Metaspace would have turned into it), else with the first character kept.
void SentencePieceModel::normalize(NormalizedText& text) const {
  const std::u32string& chars = text.text();
  const std::string input = unicode::encode(chars);
  const char32_t space = escape_whitespaces_ ? U'\u2581' : U' ';
  std::vector<CharChange> changes;
  std::size_t skip = 0;  // consumed characters not yet given to a change
  bool prepend_dummy = false;
  std::size_t at = 0, used = 0;  // input bytes and characters consumed
  walk_normalizer(input, [&](std::string_view piece, std::size_t consumed) {
    if (consumed == 0) {  // the dummy prefix
      if (skip == 0) {
        prepend_dummy = true;
      } else {
        changes.push_back({space, 0, skip - 1});
        skip = 0;
      }
      return;
    }
    std::size_t k = 0;  // characters consumed
    for (std::size_t b = at; b < at + consumed; ++b) k += (static_cast<unsigned char>(input[b]) & 0xC0) != 0x80;
    at += consumed;
    const std::size_t first = used;
    used += k;
    auto new_grapheme = [&] {
      return first == 0 || utf8proc_grapheme_break(static_cast<utf8proc_int32_t>(chars[first - 1]),
                                                   static_cast<utf8proc_int32_t>(chars[first]));
    };
    const bool ascii = piece.size() == 1 && static_cast<unsigned char>(piece[0]) < 0x80;
    const std::u32string out = ascii ? std::u32string(1, static_cast<char32_t>(piece[0])) : unicode::decode(piece);
    if (out.empty()) {
      if (!changes.empty() && changes.back().c == space && changes.back().change <= 0 && new_grapheme()) {
        const CharChange last = changes.back();  // a space dropped after a space: the run's space moves here
        changes.pop_back();
        changes.push_back({space, -static_cast<int>(k - 1), last.skip + 1 + static_cast<std::size_t>(-last.change) + skip});
        skip = 0;
      } else if (!changes.empty() && skip == 0) {
        changes.back().change -= static_cast<int>(k);
      } else {
        skip += k;
      }
      return;
    }
    for (std::size_t i = 0; i < out.size(); ++i) changes.push_back({out[i], i < k ? 0 : 1, i == 0 ? skip : 0});
    skip = 0;
    if (out.size() < k) changes.back().change -= static_cast<int>(k - out.size());
  });
  if (remove_extra_whitespaces_)
    while (!changes.empty() && changes.back().c == space && changes.back().change <= 0) changes.pop_back();
  text.transform(changes);
  if (prepend_dummy && !text.empty()) text.prepend(std::u32string(1, space));
}

// unigram::Model::EncodeOptimized, with its float arithmetic (models/unigram.hpp).
std::vector<std::pair<std::string_view, int32_t>> SentencePieceModel::viterbi(std::string_view s) const {
  auto score = [&](int32_t id, std::size_t length) -> std::optional<double> {
    const auto& piece = pieces_[static_cast<std::size_t>(id)];
    if (piece.type == SentencePieceProto::Unused) return std::nullopt;
    // A user-defined piece gets a bonus so that it is always chosen (double, as in unigram_model.cc).
    if (piece.type == SentencePieceProto::UserDefined)
      return static_cast<double>(static_cast<float>(length) * max_score_) - 0.1;
    return static_cast<double>(piece.score);
  };
  std::vector<std::pair<std::string_view, int32_t>> out;
  for (const auto& span : unigram_best_path<float>(s, trie_, score, unk_id_, min_score_ - kUnkPenalty))
    out.emplace_back(s.substr(span.start, span.end - span.start), span.id);
  return out;
}

std::vector<std::pair<std::string, int32_t>> SentencePieceModel::encode(std::string_view text) const {
  const std::string normalized = normalize(text);
  std::vector<std::pair<std::string, int32_t>> out;
  for (auto& p : merge_unknowns(viterbi(normalized))) out.emplace_back(std::move(p.piece), p.id);
  return out;
}

std::vector<SentencePieceModel::Piece> SentencePieceModel::encode(NormalizedText normalized) const {
  normalize(normalized);
  const std::string bytes = unicode::encode(normalized.text());
  const std::vector<std::size_t> char_at = unicode::chars_before_bytes(bytes);
  std::vector<Piece> out;
  std::size_t begin = 0;  // the pieces cover the normalized text in order
  for (auto& p : merge_unknowns(viterbi(bytes))) {
    p.span = normalized.original(char_at[begin], char_at[begin + p.piece.size()]);
    begin += p.piece.size();
    out.push_back(std::move(p));
  }
  return out;
}

// Consecutive unknown pieces merged into one (PopulateSentencePieceText).
std::vector<SentencePieceModel::Piece> SentencePieceModel::merge_unknowns(
    const std::vector<std::pair<std::string_view, int32_t>>& pieces) const {
  std::vector<Piece> out;
  bool prev_unk = false;
  for (const auto& [piece, id] : pieces) {
    const bool unk = id == unk_id_;
    if (prev_unk && unk) out.back().piece += piece;
    else out.push_back({std::string(piece), id, {}});
    prev_unk = unk;
  }
  return out;
}

}  // namespace attnscan::detail
