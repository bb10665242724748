#pragma once
// SentencePiece `*.model` files read by attnscan itself (no libsentencepiece: Debian's build exports
// its bundled protobuf-lite, whose symbols clash with the libprotobuf LibTorch loads, and a program
// linking both segfaulted at start-up).
//
// The file is a serialized protobuf ModelProto (sentencepiece_model.proto, sentencepiece 0.2.0),
// parsed here from the wire format. The encoder is SentencePieceProcessor::Encode as the Python
// library (0.2.0) runs it for a Unigram model: the Normalizer (user-defined symbols kept whole, the
// precompiled charsmap's longest match at each position, remove_extra_whitespaces, add_dummy_prefix,
// spaces escaped to U+2581), then unigram::Model::EncodeOptimized (Viterbi over UTF-8 bytes in float,
// unused pieces skipped, user-defined pieces scored length * max_score - 0.1, an uncovered character
// an unknown at min_score - 10), then consecutive unknown pieces merged into one.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/models/unigram.hpp"
#include "tokenizer/normalized_text.hpp"

namespace attnscan::detail {

class PrecompiledCharsmap;

// The fields of ModelProto that encoding depends on (the others are skipped).
struct SentencePieceProto {
  enum PieceType { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };
  struct Piece {
    std::string piece;
    float score = 0;
    int type = Normal;
  };
  std::vector<Piece> pieces;
  // trainer_spec
  int model_type = 1;  // UNIGRAM 1, BPE 2, WORD 3, CHAR 4
  bool byte_fallback = false, treat_whitespace_as_suffix = false;
  // normalizer_spec
  std::string normalizer_name, precompiled_charsmap, normalization_rule_tsv;
  bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true;
};

// Parses the bytes of a `.model` file; throws ModelError naming `file` (and the field) when the bytes
// are not a well-formed ModelProto. Never reads out of bounds, whatever the bytes.
SentencePieceProto parse_sentencepiece_proto(std::string_view bytes, const std::string& file);

class SentencePieceModel {
 public:
  // Throws ModelError naming `file` and what it holds that attnscan does not implement (a model type
  // other than Unigram, byte_fallback, treat_whitespace_as_suffix, ...) or that SentencePiece itself
  // refuses (an empty or repeated piece, no or two unknown pieces).
  SentencePieceModel(SentencePieceProto proto, const std::string& file);
  static SentencePieceModel load(const std::filesystem::path& file);

  // Normalizer::Normalize (UTF-8 in and out; a malformed byte becomes U+FFFD).
  std::string normalize(std::string_view text) const;
  // The same in place, each character keeping its alignment with the sentence (see the .cpp).
  void normalize(NormalizedText& text) const;
  // SentencePieceProcessor::Encode(text) -> (piece, id) pairs, as Python's encode(text, out_type=str).
  std::vector<std::pair<std::string, int32_t>> encode(std::string_view text) const;
  // The same, each piece with the characters of the sentence it covers.
  struct Piece {
    std::string piece;
    int32_t id = 0;
    CharSpan span;
  };
  std::vector<Piece> encode(NormalizedText text) const;

  int32_t size() const { return static_cast<int32_t>(pieces_.size()); }
  const std::string& id_to_piece(int32_t id) const { return pieces_[static_cast<std::size_t>(id)].piece; }
  // PieceToId: control/unknown pieces, then the others, else the unknown id.
  int32_t piece_to_id(const std::string& piece) const;
  int32_t unk_id() const { return unk_id_; }
  bool removes_extra_whitespaces() const { return remove_extra_whitespaces_; }

 private:
  std::vector<std::pair<std::string_view, int32_t>> viterbi(std::string_view normalized) const;
  std::vector<Piece> merge_unknowns(const std::vector<std::pair<std::string_view, int32_t>>& pieces) const;
  template <typename Emit>
  void walk_normalizer(std::string_view input, Emit&& emit) const;

  std::vector<SentencePieceProto::Piece> pieces_;
  std::unordered_map<std::string, int32_t> reserved_, normal_;  // reserved: control, unknown (and byte)
  ByteTrie trie_;        // normal, user-defined and unused pieces
  ByteTrie user_;        // user-defined pieces: kept whole by the normalizer
  std::shared_ptr<const PrecompiledCharsmap> charsmap_;
  bool add_dummy_prefix_ = true, remove_extra_whitespaces_ = true, escape_whitespaces_ = true;
  int32_t unk_id_ = -1;
  float min_score_ = 0, max_score_ = 0;
};

}  // namespace attnscan::detail
