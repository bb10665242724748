#pragma once
// The order in which `heads` and the report list the heads of one detector output.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

namespace attnscan {

// Flat (layer * heads + head) indices by descending mean; undefined (NaN) means last.
inline std::vector<std::size_t> rank_heads(const std::vector<float>& mean) {
  std::vector<std::size_t> order(mean.size());
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](std::size_t k) { return std::isnan(mean[k]) ? -INFINITY : mean[k]; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) > key(b); });
  return order;
}

}  // namespace attnscan
