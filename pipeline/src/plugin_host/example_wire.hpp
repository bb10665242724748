#pragma once
// The examples of a batch laid out in a flat buffer (a detector worker's shared memory): ids, tokens
// and each example's fp32 attention, 8-byte aligned, so the worker reads the attention in place.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "plugin_host/plugin_host.hpp"

namespace attnscan::worker {

inline std::size_t align8(std::size_t n) { return (n + 7) & ~std::size_t(7); }

// Bytes encode_batch() writes for `batch` and its mixing maps (per example, or empty).
std::size_t encoded_size(const std::vector<sdk::Example>& batch, const std::vector<MixingMaps>& mixing);
// Writes the batch at `data` (encoded_size(batch, mixing) bytes). strides[k] (where given and not 0): the
// row stride of example k's attention, each head's n x n block at the top left of a strides[k]-square one
// (the forward's padded batch), written out as n x n.
void encode_batch(uint8_t* data, const std::vector<sdk::Example>& batch, const std::vector<MixingMaps>& mixing,
                  const std::vector<int64_t>& strides = {});

// One example as the worker scores it (one at a time, so that a fault names its example).
struct DecodedExample {
  std::vector<sdk::Example> example;  // one
  std::vector<MixingMaps> mixing;     // one
};
// Reads `examples` examples written by encode_batch(); their attention and maps point into `data`,
// which must outlive them.
std::vector<DecodedExample> decode_batch(const uint8_t* data, std::size_t examples);
// Floats of detector d's result for one example: outputs x L x H scores, then outputs x L baselines.
std::size_t result_floats(const LoadedDetector& d, const sdk::Example& e);

}  // namespace attnscan::worker
