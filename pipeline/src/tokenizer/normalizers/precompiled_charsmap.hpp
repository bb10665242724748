#pragma once
// SentencePiece's normalization rules as a tokenizer.json "Precompiled" normalizer carries them:
// precompiled_charsmap = u32 (little-endian) byte size of a darts-clone double-array trie, the trie,
// then NUL-terminated replacement strings the trie's values point into. Applied as the `tokenizers`
// crate applies it: per extended grapheme cluster (shorter than 6 UTF-8 bytes) the first (shortest)
// prefix of the cluster found in the trie replaces the whole cluster; otherwise each character is
// looked up alone. The slow SentencePiece path (sentencepiece_model.cpp) uses longest_prefix instead,
// as SentencePiece's own Normalizer does.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/normalized_text.hpp"

namespace attnscan::detail {

class PrecompiledCharsmap {
 public:
  // `blob`: the decoded precompiled_charsmap; throws std::runtime_error naming what is malformed.
  explicit PrecompiledCharsmap(std::string blob);
  // The text normalized in place, each character's alignment kept as the crate keeps it.
  void normalize(NormalizedText& text) const;
  // SentencePiece's Normalizer::NormalizePrefix: the longest key of the trie that is a prefix of
  // `text` (darts-clone commonPrefixSearch), as (replacement, bytes matched); bytes 0 when none.
  std::pair<std::string_view, std::size_t> longest_prefix(std::string_view text) const;

 private:
  // The replacement of the shortest prefix of `key` in the trie, if any.
  std::optional<std::string_view> first_prefix(std::string_view key) const;

  std::vector<uint32_t> units_;
  std::string normalized_;
};

// RFC 4648 base64 (padding optional); throws std::runtime_error on other characters.
std::string base64_decode(std::string_view text);

}  // namespace attnscan::detail
