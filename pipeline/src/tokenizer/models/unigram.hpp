#pragma once
// The Unigram model's search, shared by SentencePiece's own encoder (files/sentencepiece_model.cpp,
// unigram::Model::EncodeOptimized) and tokenizer.json's Unigram (models/fast_model.cpp, the
// `tokenizers` crate's Unigram::encode_optimized): a byte trie of the pieces and the Viterbi best
// path over the UTF-8 bytes of one normalized string.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

namespace attnscan::detail {

// A byte trie over a set of strings (node 0 the root). The edges live in one open-addressing table
// (the Viterbi search looks one up per byte it reads).
class ByteTrie {
 public:
  ByteTrie() : edges_(16), value_(1, -1) {}
  void insert(std::string_view key, int32_t value);
  // The child of `node` along byte `c`, -1 when none.
  int32_t child(int32_t node, unsigned char c) const {
    const uint64_t key = edge_key(node, c);
    for (std::size_t i = slot(key);; i = (i + 1) & (edges_.size() - 1)) {
      if (edges_[i].key == key) return edges_[i].child;
      if (edges_[i].key == kNoEdge) return -1;
    }
  }
  int32_t value(int32_t node) const { return value_[static_cast<std::size_t>(node)]; }
  bool empty() const { return value_.size() == 1; }
  // The length of the longest key that is a prefix of `text`, 0 when none.
  std::size_t longest_prefix(std::string_view text) const;

 private:
  struct Edge {
    uint64_t key = kNoEdge;  // (parent node << 8) | byte
    int32_t child = -1;
  };
  static constexpr uint64_t kNoEdge = ~uint64_t{0};
  static uint64_t edge_key(int32_t node, unsigned char c) { return (static_cast<uint64_t>(node) << 8) | c; }
  std::size_t slot(uint64_t key) const {  // Fibonacci hashing into the power-of-two table
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - table_bits_));
  }
  void place(const Edge& e);
  void grow();

  std::vector<Edge> edges_;     // size 2^table_bits_, at most half full
  int table_bits_ = 4;
  std::vector<int32_t> value_;  // node -> value, -1 when the node ends no key
};

// string_util::OneCharLen: the length of a UTF-8 sequence from its lead byte's high nibble.
inline std::size_t one_char_len(unsigned char c) { return "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[c >> 4]; }

inline constexpr std::size_t kNoPath = std::numeric_limits<std::size_t>::max();  // a byte no path reaches yet

// One piece of the best path: bytes [start, end) of the string, the trie value (piece id) or the
// unknown id.
struct UnigramSpan {
  std::size_t start = 0, end = 0;
  int32_t id = -1;
};

// The best segmentation of `s`: the path of highest total score, the first found kept on ties, a
// character no piece of its own length covers scored `unk_score` with `unk_id` (none: no such edge).
// `score(id, length)` gives a piece's score, nullopt to skip it. Scores add in double and are kept as
// `Stored` (float: SentencePiece, which keeps its lattice in float; double: tokenizers), the unknown's
// in `Stored` arithmetic. Empty when some byte cannot be reached (no unknown id).
template <typename Stored, typename Score>
std::vector<UnigramSpan> unigram_best_path(std::string_view s, const ByteTrie& trie, Score&& score,
                                           std::optional<int32_t> unk_id, Stored unk_score) {
  struct Best {
    int32_t id;
    Stored score;
    std::size_t start;
  };
  const std::size_t n = s.size();
  std::vector<Best> best(n + 1, Best{-1, Stored(0), kNoPath});
  for (std::size_t start = 0; start < n;) {
    const Stored here = best[start].score;
    const std::size_t mblen = std::min(one_char_len(static_cast<unsigned char>(s[start])), n - start);
    bool single = false;
    int32_t node = 0;
    for (std::size_t k = start; k < n;) {
      node = trie.child(node, static_cast<unsigned char>(s[k]));
      if (node < 0) break;
      ++k;
      const int32_t id = trie.value(node);
      if (id < 0) continue;
      const std::optional<double> piece = score(id, k - start);
      if (!piece) continue;
      const double candidate = *piece + static_cast<double>(here);
      Best& target = best[k];
      if (target.start == kNoPath || candidate > static_cast<double>(target.score))
        target = {id, static_cast<Stored>(candidate), start};
      if (k - start == mblen) single = true;
    }
    if (!single && unk_id) {
      Best& target = best[start + mblen];
      const Stored candidate = unk_score + here;
      if (target.start == kNoPath || candidate > target.score) target = {*unk_id, candidate, start};
    }
    start += mblen;
  }
  std::vector<UnigramSpan> path;
  for (std::size_t end = n; end > 0;) {
    const Best& b = best[end];
    if (b.start == kNoPath) return {};
    path.push_back({b.start, end, b.id});
    end = b.start;
  }
  return {path.rbegin(), path.rend()};
}

}  // namespace attnscan::detail
