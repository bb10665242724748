#pragma once
// Turns one processed example (record, encoding, its attention in an encoder output) into layout
// columns, converting attention to the storage dtype and the stored layer/head subsets.
#include "dataset/dataset.hpp"
#include "attnscan/detector.hpp"
#include "encoder/encoder.hpp"
#include "tokenizer/tokenizer.hpp"
#include "store/layout_file.hpp"

namespace attnscan {

// Metadata and tokens of one example; attention_offset: its first value in the block's attention
// buffer, or -1 when its attention is not stored. Character offsets are the encoding's own.
void append_example(LayoutChunk& chunk, uint64_t index, const PairRecord& record, const Encoding& encoding,
                    int64_t attention_offset);

// The gold tree columns (tokens/dep_head, tokens/dep_relation) of an annotated record's tokens: every
// piece of a word carries its word's head and relation; template specials -2 and "".
void append_tree_columns(LayoutChunk& chunk, const PairRecord& record, const Encoding& encoding);

// Writes example `batch_row`'s stored layers and heads, n x n each, in the storage dtype, to dst.
void write_attention(uint8_t* dst, const EncoderOutput& output, int64_t batch_row, int64_t n, const LayoutParams& params);

// The whole word token t belongs to (its own text for added [CLS]/[SEP]).
std::string token_word(const Encoding& encoding, std::size_t t);

// What token t of a pair encoding made with `pair_template` is: its template specials are those with
// word_index -1; the ones before A (the template's prefix) are Begin, the rest Separator. The one
// place detectors' roles come from.
sdk::TokenRole token_role(const Encoding& encoding, std::size_t t, const PairTemplate& pair_template);

// Token t as a detector sees it: role, sentence (the encoding's segment) and the model's type id.
sdk::Token detector_token(const Encoding& encoding, std::size_t t, const PairTemplate& pair_template);

void append_reject(LayoutChunk& chunk, uint64_t index, const RejectedRow& row);

uint16_t float_to_half(float f);

}  // namespace attnscan
