#pragma once
// What a Hugging Face tokenizer.json (the Rust "fast" tokenizer) asks for, read and validated:
// the parts attnscan reproduces exactly, everything else refused with a ModelError naming the file
// and the feature. Applying it: fast_text.hpp.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/processors/pair_template.hpp"
#include "tokenizer/tokenizer.hpp"

namespace attnscan::detail {

class PrecompiledCharsmap;  // SentencePiece's normalizer blob (tokenizer/normalizers/precompiled_charsmap.hpp)
class SplitRegex;           // Split's pattern (tokenizer/pre_tokenizers/split_regex.hpp)

struct NormalizerStep {
  enum class Kind { Bert, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Precompiled, Replace, Strip, Prepend } kind =
      Kind::Bert;
  // BertNormalizer
  bool clean_text = true, handle_chinese_chars = true, lowercase = true;
  std::optional<bool> strip_accents;
  // Precompiled
  std::shared_ptr<const PrecompiledCharsmap> charsmap;
  // Replace: `find` (a string pattern), or a regex of one character repeated min_repeat..max_repeat
  // times (`repeat_char`, max_repeat 0: unbounded); `content` replaces each leftmost, longest match.
  std::u32string find, content;
  char32_t repeat_char = 0;
  std::size_t min_repeat = 0, max_repeat = 0;
  // Strip
  bool strip_left = false, strip_right = false;
};

struct PreTokenizerStep {
  enum class Kind { Bert, WhitespaceSplit, ByteLevel, Metaspace, Split, Digits } kind;
  // ByteLevel
  bool add_prefix_space = false, use_regex = true;
  // Split: what becomes of the pattern's matches (the crate's SplitDelimiterBehavior)
  enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
  std::shared_ptr<const SplitRegex> pattern = nullptr;
  SplitBehavior behavior = SplitBehavior::Isolated;
  bool invert = false;  // the text between matches is what the behaviour applies to
  // Digits
  bool individual_digits = false;
  // Metaspace
  char32_t replacement = U'\u2581';
  enum class Prepend { Always, First, Never } prepend = Prepend::Always;
  bool split = true;
};

struct AddedToken {
  std::string content;      // as written in the file
  std::u32string pattern;   // what is matched: content, normalized when `normalized`
  int32_t id = 0;
  bool special = false, lstrip = false, rstrip = false, normalized = false, single_word = false;
};

struct FastPipeline {
  std::vector<NormalizerStep> normalizers;     // applied in order; empty: none
  std::vector<PreTokenizerStep> pre_tokenizers;
  std::vector<AddedToken> added;
  SubwordKind model = SubwordKind::WordPiece;  // "BPE": ByteLevelBpe with a ByteLevel pre-tokenizer, else Bpe
  std::string model_type = "WordPiece";        // as the file names it
  Vocab vocab;                                 // the model's vocabulary (Unigram: piece i has id i)
  // BPE
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order
  std::optional<std::string> bpe_unk;          // model.unk_token (null: characters outside the vocab are dropped)
  bool fuse_unk = false, ignore_merges = false;
  bool byte_fallback = false;                  // a character outside the vocab as its bytes' <0xNN> tokens
  // Unigram
  std::vector<double> scores;                  // per id
  std::optional<int32_t> unigram_unk;          // model.unk_id
  std::vector<std::pair<int32_t, std::string>> added_outside_vocab;  // added ids the model vocab lacks
  std::string unk_token = "[UNK]", continuing_subword_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
  PairTemplate pair_template;
  std::string description;                     // "tokenizer.json (WordPiece, RobertaProcessing)"
  bool byte_level = false;                     // a ByteLevel pre-tokenizer maps bytes to characters
  bool trim_offsets = false, trim_prefix_space = false;  // RobertaProcessing's or ByteLevel's (processors/trim_offsets.hpp)
  std::optional<std::string> pad_token;        // padding.pad_token when the file has one
};

FastPipeline read_tokenizer_json(const std::filesystem::path& file);

// The `content` of the added tokens a tokenizer.json lists (the slow tokenizer splits them out of
// text too, as HF does when tokenizer_config.json has no added_tokens_decoder).
std::vector<std::string> added_token_contents(const std::filesystem::path& tokenizer_json);

}  // namespace attnscan::detail
