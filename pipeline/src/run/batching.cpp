#include "run/batching.hpp"

#include <algorithm>
#include <numeric>

namespace attnscan {

std::vector<std::vector<std::size_t>> bucket_batches(const std::vector<std::size_t>& lengths, int64_t batch_tokens,
                                                     uint64_t attention_values, uint64_t layers_x_heads) {
  std::vector<std::size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return lengths[a] < lengths[b]; });
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t start = 0; start < order.size();) {
    std::size_t end = start + 1;
    auto fits = [&](std::size_t count, uint64_t longest) {
      if (static_cast<int64_t>(count * longest) > batch_tokens) return false;
      return attention_values == 0 || count * longest <= kBatchMinTokens ||
             count * longest * longest * layers_x_heads <= attention_values;
    };
    while (end < order.size() && fits(end - start + 1, lengths[order[end]])) ++end;
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start), order.begin() + static_cast<std::ptrdiff_t>(end));
    start = end;
  }
  return batches;
}

}  // namespace attnscan
