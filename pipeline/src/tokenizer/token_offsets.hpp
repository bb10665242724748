#pragma once
// Character offsets of tokens into the sentence they came from: Unicode code points (Python str
// indices) into the sentence as given, [start, end), following the `offset_mapping` of Hugging Face's
// fast tokenizers (see docs/hdf5-layout.md, "Character offsets"). Template specials ([CLS], <s>, ...)
// have none (-1, -1).
//
// The offsets are found by aligning each token's text with the sentence, not by tracking every
// normalisation step: both are compared character by character after a per-character fold (NFKD,
// marks (Mn) and control characters removed, Python lowercasing), so lowercasing, accent stripping,
// NFKC / the precompiled charsmap and removed characters map back to the characters they came from.
//  - WordPiece: "##" is dropped; a piece covers exactly its characters (accents removed from the end of
//    a word are not in its span, as in HF);
//  - byte-level BPE: bytes are matched exactly; a piece holding part of a multi-byte character covers
//    the whole character; leading/trailing "Ġ" are trimmed from the span (HF's trim_offsets);
//  - Unigram: "▁" stands for the space before the piece, which the span includes when the sentence has
//    one (HF's Metaspace); the "▁" prepended to a sentence adds nothing to its piece's span, and a
//    lone one covers the first character (the one it was put before);
//  - an unknown token ([UNK], <unk>) covers the characters up to where the next token matches.
// A sentence whose tokens cannot be aligned (which this rule set does not foresee) gets -1 for all of
// its tokens, never a guess; `aligned` says whether that happened.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.hpp"

namespace attnscan {

struct CharSpan {
  int64_t start = -1, end = -1;
  bool operator==(const CharSpan& o) const { return start == o.start && end == o.end; }
};

struct SentenceOffsets {
  std::vector<CharSpan> spans;  // one per token given
  bool aligned = true;          // false: no token could be placed (all spans -1)
};

// The tokens (vocabulary text, e.g. "##ing", "Ġcat", "▁cat") of one sentence, in order, a prefix of
// its tokens (truncation cuts the end). `in_text_special`: 1 for special tokens written in the text,
// matched literally. `unk`: the unknown token's text. `cjk_isolated`: the tokenizer's normalizer makes
// each CJK character a word of its own (Tokenizer::cjk_isolated), which decides a WordPiece or
// WordLevel unknown token's span.
SentenceOffsets sentence_char_offsets(std::string_view sentence, const std::vector<std::string>& tokens,
                                      const std::vector<uint8_t>& in_text_special, SubwordKind kind,
                                      std::string_view unk, bool cjk_isolated = true);

// Every token of a pair (or single) encoding `tokenizer` made: template specials -1/-1, the tokens of A
// into `a`, of B (segment 1) into `b`. A truncated sentence is aligned with all of its tokens
// (tokenizer.tokenize), so that its last kept token ends where the first removed one starts (what
// decides an <unk>'s end). `unaligned` (optional) counts the sentences that could not be aligned.
std::vector<CharSpan> encoding_char_offsets(const Encoding& encoding, std::string_view a, std::string_view b,
                                            const Tokenizer& tokenizer, int* unaligned = nullptr);

}  // namespace attnscan
