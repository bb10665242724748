#include "tokenizer/models/unigram.hpp"

namespace attnscan::detail {

void ByteTrie::place(const Edge& e) {
  std::size_t i = slot(e.key);
  while (edges_[i].key != kNoEdge) i = (i + 1) & (edges_.size() - 1);
  edges_[i] = e;
}

void ByteTrie::grow() {
  std::vector<Edge> old(std::size_t{2} << table_bits_);
  old.swap(edges_);
  ++table_bits_;
  for (const Edge& e : old)
    if (e.key != kNoEdge) place(e);
}

void ByteTrie::insert(std::string_view key, int32_t value) {
  int32_t node = 0;
  for (unsigned char c : key) {
    int32_t next = child(node, c);
    if (next < 0) {
      if (2 * value_.size() > edges_.size()) grow();  // value_.size() - 1 edges, one more now
      next = static_cast<int32_t>(value_.size());
      value_.push_back(-1);
      place({edge_key(node, c), next});
    }
    node = next;
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
