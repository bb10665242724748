#pragma once
// What a tokenizer is configured with besides its vocabulary file:
//  - TokenizerFacts: what it must know of the model it feeds, given by the model's family
//    (model/families/), so that no tokenizer code branches on a model_type;
//  - TokenizerConfigFiles: tokenizer_config.json and special_tokens_map.json, each read once per load
//    into one struct, every malformed field a ModelError naming the file and the field;
//  - TokenizerConfig: the settings the tokenizer then runs with.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attnscan {

// The pair template of a family's slow tokenizer: `[CLS] A [SEP] B [SEP]` or `<s> A </s></s> B </s>`.
enum class TemplateKind { Bert, Roberta };
// The slow (Python) class that reads a family's SentencePiece `*.model`.
enum class SentencePieceFlavour { None, XlmRoberta, Albert, Deberta };
// How a sentence pair becomes one sequence (Tokenizer::encode_pair).
enum class PairEncoding {
  Template,  // A and B tokenized apart, with the pair template's specials around them (the encoder families)
  Joined,    // a + separator + b as one text through the single-sentence template (the decoders)
};

struct TokenizerFacts {
  std::string model_type = "bert";  // config.json's, for messages
  int64_t vocab_size = 0;           // every token id must be below it (the embedding table's rows)
  int64_t max_tokens = 512;         // the longest sequence the model takes (caps model_max_length)
  TemplateKind slow_template = TemplateKind::Bert;
  SentencePieceFlavour sentencepiece = SentencePieceFlavour::None;
  PairEncoding pairs = PairEncoding::Template;
};

// One entry of tokenizer_config.json's added_tokens_decoder (transformers' AddedToken).
struct AddedTokenEntry {
  std::string content;
  int32_t id = 0;
  bool lstrip = false, rstrip = false, single_word = false, special = true;
  std::optional<bool> normalized;
};

// Special-token strings as a file sets them (a string, or an AddedToken object's "content").
struct SpecialTokenNames {
  std::optional<std::string> cls, sep, pad, unk, mask, bos, eos;
};

struct TokenizerConfigFiles {
  std::filesystem::path config_file;  // DIR/tokenizer_config.json, empty when absent
  std::filesystem::path map_file;     // DIR/special_tokens_map.json, empty when absent
  // tokenizer_config.json
  std::optional<bool> do_lower_case, strip_accents, tokenize_chinese_chars, do_basic_tokenize, add_prefix_space,
      remove_space, keep_accents, split_by_punct;
  std::optional<double> model_max_length;  // HF writes 1e30 when unset
  std::string tokenizer_class;
  SpecialTokenNames specials;
  std::optional<std::vector<AddedTokenEntry>> added_tokens_decoder;  // in the file's order
  // special_tokens_map.json
  SpecialTokenNames map_specials;

  bool has_config() const { return !config_file.empty(); }
};

// Reads DIR/tokenizer_config.json and DIR/special_tokens_map.json where present.
TokenizerConfigFiles read_tokenizer_config_files(const std::filesystem::path& dir);

struct TokenizerConfig {
  bool do_lower_case = true;
  std::optional<bool> strip_accents;  // unset: follows do_lower_case, as in HF BertTokenizer
  bool tokenize_chinese_chars = true;
  int64_t model_max_length = 512;  // already capped at the model's max_tokens
  std::string unk_token = "[UNK]", sep_token = "[SEP]", pad_token = "[PAD]", cls_token = "[CLS]",
              mask_token = "[MASK]";
  bool pad_named = false;  // pad_token is tokenizer_config.json's, not the "[PAD]" default
  // bos_token and eos_token of tokenizer_config.json, else special_tokens_map.json; unset (or null): none.
  std::optional<std::string> bos_token, eos_token;
};

// The settings of tokenizer_config.json (defaults where it is absent); model_max_length is capped at
// facts.max_tokens because HF writes a huge sentinel when it is unset. do_basic_tokenize false is refused.
TokenizerConfig tokenizer_config(const TokenizerConfigFiles& files, const TokenizerFacts& facts);

}  // namespace attnscan
