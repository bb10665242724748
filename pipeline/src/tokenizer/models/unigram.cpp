#include "tokenizer/models/unigram.hpp"

namespace attnscan::detail {

void ByteTrie::insert(std::string_view key, int32_t value) {
  int32_t node = 0;
  for (unsigned char c : key) {
    auto [it, added] = edges_.emplace((static_cast<uint64_t>(node) << 8) | c, static_cast<int32_t>(value_.size()));
    if (added) value_.push_back(-1);
    node = it->second;
  }
  value_[static_cast<std::size_t>(node)] = value;
}

std::size_t ByteTrie::longest_prefix(std::string_view text) const {
  std::size_t best = 0;
  int32_t node = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    node = child(node, static_cast<unsigned char>(text[i]));
    if (node < 0) break;
    if (value(node) >= 0) best = i + 1;
  }
  return best;
}

}  // namespace attnscan::detail
