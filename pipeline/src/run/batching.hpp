#pragma once
// Length-bucketed batches: indices sorted by length (stable), cut so that each batch's padded size
// (count x longest) stays within the token budget and its attention output (count x longest^2 x
// layers x heads values) within the attention budget, or its padded size within kBatchMinTokens;
// an item over the token budget forms its own batch.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnscan {
// Attention values one forward may produce (8 MiB of fp32): bounds memory whatever the lengths.
inline constexpr uint64_t kBatchAttentionValues = 2u << 20;
// Padded tokens a batch may reach past the attention budget. Fewer rows make the linear layers' GEMMs
// slow: all-mpnet-base-v2's 144 heads fit 5 pairs of 52 tokens in the budget; 7 took 4% less CPU (512
// tokens, 9 pairs, 7% less, but MiniLM's run 2% more). No batch of several examples holds more
// attention than one 384-token example.
inline constexpr uint64_t kBatchMinTokens = 384;

std::vector<std::vector<std::size_t>> bucket_batches(const std::vector<std::size_t>& lengths, int64_t batch_tokens,
                                                     uint64_t attention_values = 0, uint64_t layers_x_heads = 0);
}
