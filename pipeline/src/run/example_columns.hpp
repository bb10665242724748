#pragma once
// Turns one processed example (record, encoding, its attention in an encoder output) into layout
// columns, converting attention to the storage dtype and the stored layer/head subsets.
#include "attnscan/dataset.hpp"
#include "attnscan/encoder.hpp"
#include "attnscan/tokenizer.hpp"
#include "store/layout_file.hpp"

namespace attnscan {

void append_example(LayoutChunk& chunk, uint64_t index, const PairRecord& record, const Encoding& encoding,
                    const EncoderOutput* output, int64_t batch_row, const LayoutParams& params);

void append_reject(LayoutChunk& chunk, uint64_t index, const RejectedRow& row);

uint16_t float_to_half(float f);

}  // namespace attnscan
