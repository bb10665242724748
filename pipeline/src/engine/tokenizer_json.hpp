#pragma once
// What a Hugging Face tokenizer.json (the Rust "fast" tokenizer) asks for, read and validated:
// the parts attnscan reproduces exactly, everything else refused with a ModelError naming the file
// and the feature. Applying it: fast_text.hpp.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "attnscan/pair_template.hpp"
#include "attnscan/tokenizer.hpp"

namespace attnscan::detail {

struct NormalizerStep {
  enum class Kind { Bert, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents } kind = Kind::Bert;
  // BertNormalizer
  bool clean_text = true, handle_chinese_chars = true, lowercase = true;
  std::optional<bool> strip_accents;
};

struct PreTokenizerStep {
  enum class Kind { Bert, WhitespaceSplit } kind;
};

struct AddedToken {
  std::string content;      // as written in the file
  std::u32string pattern;   // what is matched: content, normalized when `normalized`
  int32_t id = 0;
  bool special = false, lstrip = false, rstrip = false, normalized = false;
};

struct FastPipeline {
  std::vector<NormalizerStep> normalizers;     // applied in order; empty: none
  std::vector<PreTokenizerStep> pre_tokenizers;
  std::vector<AddedToken> added;
  Vocab vocab;                                 // WordPiece model vocabulary
  std::vector<std::pair<int32_t, std::string>> added_outside_vocab;  // added ids the model vocab lacks
  std::string unk_token = "[UNK]", continuing_subword_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
  PairTemplate pair_template;
  std::string description;                     // "tokenizer.json (WordPiece, RobertaProcessing)"
  std::optional<std::string> pad_token;        // padding.pad_token when the file has one
};

FastPipeline read_tokenizer_json(const std::filesystem::path& file);

// The `content` of the added tokens a tokenizer.json lists (the slow tokenizer splits them out of
// text too, as HF does when tokenizer_config.json has no added_tokens_decoder).
std::vector<std::string> added_token_contents(const std::filesystem::path& tokenizer_json);

}  // namespace attnscan::detail
