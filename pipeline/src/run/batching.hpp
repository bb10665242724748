#pragma once
// Length-bucketed batches: indices sorted by length (stable), cut so that each batch's padded size
// (count x its longest) stays within the token budget; a single longer item forms its own batch.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnscan {
std::vector<std::vector<std::size_t>> bucket_batches(const std::vector<std::size_t>& lengths, int64_t batch_tokens);
}
