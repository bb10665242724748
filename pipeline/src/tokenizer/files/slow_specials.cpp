// The special and added tokens of the slow (Python) BPE and SentencePiece tokenizers.
#include <algorithm>

#include "common/error.hpp"
#include "tokenizer/files/recipes.hpp"

namespace attnscan::detail {

namespace {

void take(const SpecialTokenNames& from, SlowSpecials& s) {
  const auto set = [](const std::optional<std::string>& v, std::string& dst) {
    if (v) dst = *v;
  };
  set(from.cls, s.cls);
  set(from.sep, s.sep);
  set(from.pad, s.pad);
  set(from.unk, s.unk);
  set(from.mask, s.mask);
  set(from.bos, s.bos);
  set(from.eos, s.eos);
}

// tokenizer_config.json's added_tokens_decoder (id, lstrip, rstrip), then every special token not among
// them, with its vocabulary id (the mask token lstrip, as RobertaTokenizer, XLMRobertaTokenizer and
// AlbertTokenizer make it).
std::vector<SlowAddedToken> slow_added(const TokenizerConfigFiles& files, const SlowSpecials& s, const Vocab& vocab) {
  std::vector<SlowAddedToken> out;
  for (const auto& e : files.added_tokens_decoder.value_or(std::vector<AddedTokenEntry>{}))
    out.push_back({e.content, e.id, e.lstrip, e.rstrip, e.special, e.single_word});
  for (const auto* tok : {&s.bos, &s.eos, &s.unk, &s.sep, &s.pad, &s.cls, &s.mask}) {
    if (tok->empty()) continue;
    const bool have = std::any_of(out.begin(), out.end(), [&](const SlowAddedToken& a) { return a.content == *tok; });
    const int32_t id = vocab.find(*tok);
    if (have || id < 0) continue;
    out.push_back({*tok, id, tok == &s.mask, false, true});
  }
  return out;
}

}  // namespace

SlowSpecials slow_specials(const TokenizerConfigFiles& files, SlowSpecials s) {
  take(files.map_specials, s);
  take(files.specials, s);
  return s;
}

void check_vocab_size(int64_t max_id, const TokenizerFacts& facts, const std::filesystem::path& file) {
  if (max_id >= facts.vocab_size)
    throw ModelError(file.string() + ": token id " + std::to_string(max_id) + " but config.json says vocab_size " +
                     std::to_string(facts.vocab_size));
}

SlowSpecialIds slow_special_ids(const TokenizerConfigFiles& files, const std::filesystem::path& file,
                                const SlowSpecials& s, const Vocab& vocab, const TokenizerFacts& facts) {
  SlowSpecialIds out;
  out.added = slow_added(files, s, vocab);
  int64_t max_id = static_cast<int64_t>(vocab.size()) - 1;
  for (const auto& a : out.added) max_id = std::max<int64_t>(max_id, a.id);
  check_vocab_size(max_id, facts, file);
  auto id_of = [&](const std::string& tok, const char* what) {
    for (const auto& a : out.added)
      if (a.content == tok) return a.id;
    const int32_t id = vocab.find(tok);
    if (id < 0) throw ModelError(file.string() + ": " + what + " '" + tok + "' is not in the vocabulary");
    return id;
  };
  out.cls = id_of(s.cls, "cls_token");
  out.sep = id_of(s.sep, "sep_token");
  out.pad = id_of(s.pad, "pad_token");
  out.unk = id_of(s.unk, "unk_token");
  return out;
}

SpecialTokens encoder_specials(int32_t cls, int32_t sep, int32_t pad) {
  SpecialTokens s;
  s.begin = cls;
  s.end = s.separator = sep;
  s.pad = pad;
  return s;
}

void set_special_strings(TokenizerConfig& c, const SlowSpecials& s) {
  c.cls_token = s.cls;
  c.sep_token = s.sep;
  c.pad_token = s.pad;
  c.unk_token = s.unk;
  c.mask_token = s.mask;
}

}  // namespace attnscan::detail
