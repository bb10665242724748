#include "tokenizer/normalizers/precompiled_charsmap.hpp"

#include <cstring>
#include <stdexcept>
#include <utf8proc.h>

#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

std::string base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    const int v = value(c);
    if (v < 0) throw std::runtime_error("precompiled_charsmap is not base64");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

PrecompiledCharsmap::PrecompiledCharsmap(std::string blob) {
  if (blob.size() < 4) throw std::runtime_error("precompiled_charsmap is shorter than its header");
  const auto* b = reinterpret_cast<const unsigned char*>(blob.data());
  const uint32_t trie_bytes = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  if (trie_bytes % 4 != 0 || trie_bytes == 0 || trie_bytes > blob.size() - 4)
    throw std::runtime_error("precompiled_charsmap: trie size " + std::to_string(trie_bytes) + " does not fit the " +
                             std::to_string(blob.size()) + "-byte blob");
  units_.resize(trie_bytes / 4);
  for (std::size_t i = 0; i < units_.size(); ++i) {
    const auto* u = b + 4 + 4 * i;
    units_[i] = u[0] | (u[1] << 8) | (u[2] << 16) | (static_cast<uint32_t>(u[3]) << 24);
  }
  normalized_ = blob.substr(4 + trie_bytes);
}

// darts-clone unit layout: bit 8 has_leaf, bits 0..7 (+ bit 31) label, value in bits 0..30 of a leaf
// unit, offset = (unit >> 10) << ((unit & (1 << 9)) >> 6).
std::optional<std::string_view> PrecompiledCharsmap::first_prefix(std::string_view key) const {
  auto offset = [](uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); };
  std::size_t pos = 0;
  if (units_.empty()) return std::nullopt;
  pos ^= offset(units_[0]);
  for (unsigned char c : key) {
    pos ^= c;
    if (pos >= units_.size()) return std::nullopt;
    const uint32_t unit = units_[pos];
    if ((unit & ((1u << 31) | 0xFFu)) != c) return std::nullopt;
    pos ^= offset(unit);
    if (pos >= units_.size()) return std::nullopt;
    if ((unit >> 8) & 1u) {
      const std::size_t start = units_[pos] & ((1u << 31) - 1);
      if (start >= normalized_.size()) return std::nullopt;
      const std::size_t end = normalized_.find('\0', start);
      return std::string_view(normalized_).substr(start, (end == std::string::npos ? normalized_.size() : end) - start);
    }
  }
  return std::nullopt;
}

std::pair<std::string_view, std::size_t> PrecompiledCharsmap::longest_prefix(std::string_view key) const {
  auto offset = [](uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); };
  std::pair<std::string_view, std::size_t> best{{}, 0};
  if (units_.empty()) return best;
  std::size_t pos = offset(units_[0]);
  for (std::size_t i = 0; i < key.size(); ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    pos ^= c;
    if (pos >= units_.size()) break;
    const uint32_t unit = units_[pos];
    if ((unit & ((1u << 31) | 0xFFu)) != c) break;
    pos ^= offset(unit);
    if (pos >= units_.size()) break;
    if ((unit >> 8) & 1u) {
      const std::size_t start = units_[pos] & ((1u << 31) - 1);
      if (start >= normalized_.size()) continue;  // a value outside the strings: not a rule
      const std::size_t end = normalized_.find('\0', start);
      best = {std::string_view(normalized_).substr(start, (end == std::string::npos ? normalized_.size() : end) - start),
              i + 1};
    }
  }
  return best;
}

namespace {

// The crate's Precompiled `replace`: the new characters replace the old ones one for one; extra new
// ones are inserted; old ones left over are removed with the last change so far (with none, at the
// very start, the removal is not recorded, as in the crate, and the characters after it shift).
void push_replacement(std::vector<CharChange>& changes, std::size_t old_count, std::u32string_view replacement) {
  for (char32_t c : replacement) changes.push_back({c, 0});
  const auto diff = static_cast<std::ptrdiff_t>(replacement.size()) - static_cast<std::ptrdiff_t>(old_count);
  if (diff > 0) {
    for (std::size_t k = changes.size() - static_cast<std::size_t>(diff); k < changes.size(); ++k) changes[k].change = 1;
  } else if (diff < 0 && !changes.empty()) {
    changes.back().change += static_cast<int>(diff);
  }
}

}  // namespace

void PrecompiledCharsmap::normalize(NormalizedText& normalized) const {
  const std::u32string& text = normalized.text();
  std::vector<CharChange> changes;
  changes.reserve(text.size());
  bool modified = false;
  std::size_t i = 0;
  utf8proc_int32_t state = 0;
  while (i < text.size()) {
    std::size_t j = i + 1;  // one extended grapheme cluster [i, j)
    while (j < text.size() &&
           !utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(text[j - 1]),
                                             static_cast<utf8proc_int32_t>(text[j]), &state))
      ++j;
    const std::string grapheme = unicode::encode(std::u32string_view(text.data() + i, j - i));
    std::optional<std::string_view> whole;
    if (grapheme.size() < 6) whole = first_prefix(grapheme);
    if (whole) {
      modified = true;
      push_replacement(changes, j - i, unicode::decode(*whole));
    } else {
      for (std::size_t k = i; k < j; ++k) {
        const std::string c = unicode::encode(std::u32string_view(text.data() + k, 1));
        if (auto r = first_prefix(c)) {
          modified = true;
          push_replacement(changes, 1, unicode::decode(*r));
        } else {
          changes.push_back({text[k], 0});
        }
      }
    }
    i = j;
  }
  if (modified) normalized.transform(changes);
}

}  // namespace attnscan::detail
