#include "run/example_columns.hpp"

#include "common/error.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnscan {

uint16_t float_to_half(float f) {  // IEEE round-to-nearest-even; values here are in [0, 1]
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = x & 0x7FFFFF;
  if (((x >> 23) & 0xFF) == 0xFF) return static_cast<uint16_t>(sign | 0x7C00 | (mant ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  if (exp <= 0) {  // subnormal or zero
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const int shift = 14 - exp;
    uint32_t half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // may carry into the exponent: correct
  return static_cast<uint16_t>(half);
}

namespace {

__attribute__((target("avx,f16c"))) void to_half_f16c(const float* src, uint16_t* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  if (i == n) return;
  // The row's last n % 8 values through the same instruction (a row of n values: 8% of them at n = 52).
  alignas(32) float tail[8] = {};
  alignas(16) uint16_t halves[8];
  std::memcpy(tail, src + i, (n - i) * sizeof(float));
  _mm_store_si128(reinterpret_cast<__m128i*>(halves), _mm256_cvtps_ph(_mm256_load_ps(tail), _MM_FROUND_TO_NEAREST_INT));
  std::memcpy(dst + i, halves, (n - i) * sizeof(uint16_t));
}

// 16 at a time; the row's last n % 16 through the same instruction under a mask.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void to_half_avx512(const float* src, uint16_t* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm512_maskz_cvtps_ph(0xFFFF, _mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  if (i == n) return;
  const __mmask16 rest = static_cast<__mmask16>((1u << (n - i)) - 1);
  _mm256_mask_storeu_epi16(dst + i, rest, _mm512_maskz_cvtps_ph(rest, _mm512_maskz_loadu_ps(rest, src + i), _MM_FROUND_TO_NEAREST_INT));
}

void to_half(const float* src, uint16_t* dst, std::size_t n) {
  static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512vl");
  static const bool f16c = __builtin_cpu_supports("f16c");
  if (avx512) return to_half_avx512(src, dst, n);
  if (f16c) return to_half_f16c(src, dst, n);
  for (std::size_t i = 0; i < n; ++i) dst[i] = float_to_half(src[i]);
}

}  // namespace

std::string token_word(const Encoding& enc, std::size_t t) {
  const auto& words = enc.segment[t] ? enc.words_b : enc.words_a;
  const int32_t w = enc.word_index[t];
  return w >= 0 && static_cast<std::size_t>(w) < words.size() ? words[static_cast<std::size_t>(w)] : enc.tokens[t];
}

sdk::TokenRole token_role(const Encoding& enc, std::size_t t, const PairTemplate& pair_template) {
  if (!enc.special[t]) return sdk::TokenRole::Content;
  if (enc.word_index[t] >= 0) return sdk::TokenRole::SpecialInText;  // written in A or B: part of a sentence
  // Truncation never removes template tokens, so the prefix is always the first tokens.
  return t < pair_template.prefix.size() ? sdk::TokenRole::Begin : sdk::TokenRole::Separator;
}

sdk::Token detector_token(const Encoding& enc, std::size_t t, const PairTemplate& pair_template) {
  sdk::Token token;
  token.text = enc.tokens[t];
  token.id = enc.ids[t];
  token.role = token_role(enc, t, pair_template);
  token.sentence = enc.segment[t];
  token.type_id = enc.type_ids[t];
  token.word_index = enc.word_index[t];
  token.word = token_word(enc, t);
  return token;
}

void append_example(LayoutChunk& c, uint64_t index, const PairRecord& r, const Encoding& enc, int64_t attention_offset) {
  auto& e = c.examples;
  e.index.push_back(index);
  e.row.push_back(r.source_row);
  e.id.push_back(r.id);
  e.sentence_a.push_back(r.a);
  e.sentence_b.push_back(r.b);
  e.label.push_back(r.label.value_or(""));
  e.has_label.push_back(r.label ? 1 : 0);
  e.label_value.push_back(r.label_value.value_or(std::numeric_limits<double>::quiet_NaN()));
  e.n_tokens.push_back(static_cast<int64_t>(enc.size()));
  e.tokens_a.push_back(static_cast<int64_t>(enc.tokens_a));
  e.tokens_b.push_back(static_cast<int64_t>(enc.tokens_b));
  e.truncated.push_back(enc.truncated ? 1 : 0);
  e.token_offset.push_back(static_cast<int64_t>(c.tokens.size()));
  e.attention_offset.push_back(attention_offset);
  for (std::size_t t = 0; t < enc.size(); ++t) {
    c.tokens.char_start.push_back(enc.offsets[t].start);
    c.tokens.char_end.push_back(enc.offsets[t].end);
    c.tokens.id.push_back(enc.ids[t]);
    c.tokens.text.push_back(enc.tokens[t]);
    c.tokens.word.push_back(token_word(enc, t));
    c.tokens.segment.push_back(enc.segment[t]);
    c.tokens.word_index.push_back(enc.word_index[t]);
    c.tokens.special.push_back(enc.special[t]);
  }
  if (!r.tree_a.empty()) append_tree_columns(c, r, enc);
}

void append_tree_columns(LayoutChunk& c, const PairRecord& r, const Encoding& enc) {
  for (std::size_t t = 0; t < enc.size(); ++t) {
    const auto& tree = enc.segment[t] ? r.tree_b : r.tree_a;
    const int32_t w = enc.word_index[t];
    if (w < 0) {  // a template special: no word
      c.dep_head.push_back(-2);
      c.dep_relation.emplace_back();
      continue;
    }
    if (static_cast<std::size_t>(w) >= tree.size())
      throw Error("example " + r.id + ": token " + std::to_string(t) + " is word " + std::to_string(w) + " of sentence " +
                  (enc.segment[t] ? "B" : "A") + ", which has " + std::to_string(tree.size()) + " words in its tree");
    c.dep_head.push_back(tree[static_cast<std::size_t>(w)].head);
    c.dep_relation.push_back(tree[static_cast<std::size_t>(w)].relation);
  }
}

void write_attention(uint8_t* dst, const EncoderOutput& out, int64_t b, int64_t n, const LayoutParams& p) {
  const std::size_t vs = attention_value_size(p.dtype);
  const auto convert = [&](const float* src, std::size_t count) {
    if (p.dtype == AttentionDType::F32) {
      std::memcpy(dst, src, count * 4);
    } else if (p.dtype == AttentionDType::F16) {
      to_half(src, reinterpret_cast<uint16_t*>(dst), count);  // dst is 2-byte aligned: offsets count values
    } else {
      for (std::size_t k = 0; k < count; ++k)
        dst[k] = static_cast<uint8_t>(std::lround(std::min(1.0f, std::max(0.0f, src[k])) * 255.0f));
    }
    dst += count * vs;
  };
  const int64_t stride = out.attention_stride(b);
  for (int64_t l : p.layers)
    for (int64_t h : p.heads) {
      const float* a = out.attention_at(b, l, h);
      if (stride == n) {  // the map is contiguous: one pass
        convert(a, static_cast<std::size_t>(n * n));
        continue;
      }
      for (int64_t q = 0; q < n; ++q) convert(a + q * stride, static_cast<std::size_t>(n));
    }
}

void append_reject(LayoutChunk& c, uint64_t index, const RejectedRow& row) {
  c.rejects.index.push_back(index);
  c.rejects.line.push_back(row.line);
  c.rejects.file.push_back(row.file.string());
  c.rejects.reason.push_back(row.reason);
}

}  // namespace attnscan
