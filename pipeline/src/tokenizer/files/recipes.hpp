#pragma once
// The file formats of a model directory's tokenizer, each a recipe (one file each) that builds the
// parts of a Tokenizer from its files, tokenizer_config.json / special_tokens_map.json (read once by
// Tokenizer::from_model_dir) and the model's facts. Every problem is a ModelError naming the file.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tokenizer/models/subword_model.hpp"
#include "tokenizer/tokenizer.hpp"

namespace attnscan::detail {

// vocab.txt: the slow WordPiece tokenizer (BertTokenizer, MPNetTokenizer).
// `added`: the added tokens split out besides the config's specials; id -1: the vocabulary's id, and a
// token not in it is not split out.
TokenizerParts wordpiece_slow_parts(Vocab vocab, TokenizerConfig config, TemplateKind kind,
                                    const std::vector<SlowAddedToken>& added);
TokenizerParts vocab_txt_recipe(const std::filesystem::path& dir, const TokenizerFacts& facts,
                                const TokenizerConfigFiles& files);
// vocab.json + merges.txt: the slow byte-level BPE tokenizer (RobertaTokenizer).
TokenizerParts vocab_merges_recipe(const std::filesystem::path& dir, const TokenizerFacts& facts,
                                   const TokenizerConfigFiles& files);
// A SentencePiece *.model: the slow XLMRobertaTokenizer or AlbertTokenizer (facts.sentencepiece, else
// tokenizer_config.json's tokenizer_class).
TokenizerParts sentencepiece_recipe(const std::filesystem::path& model_file, const TokenizerFacts& facts,
                                    const TokenizerConfigFiles& files);
// tokenizer.json: the fast tokenizer. `has_config`: a tokenizer_config.json is beside it (else the
// file's padding token is the pad token).
TokenizerParts tokenizer_json_recipe(const std::filesystem::path& tokenizer_json, const TokenizerFacts& facts,
                                     TokenizerConfig config, bool has_config);

// What the slow BPE and SentencePiece recipes share (slow_specials.cpp).
struct SlowSpecials {
  std::string cls, sep, pad, unk, mask, bos, eos;
};
// The family's defaults, then special_tokens_map.json, then tokenizer_config.json.
SlowSpecials slow_specials(const TokenizerConfigFiles& files, SlowSpecials defaults);

// The added tokens, checked against the model's vocab_size, and the ids of the template's specials
// (an added token's, else the vocabulary's); ModelError naming `file` when one has neither.
struct SlowSpecialIds {
  std::vector<SlowAddedToken> added;
  int32_t cls = 0, sep = 0, pad = 0, unk = 0;
};
SlowSpecialIds slow_special_ids(const TokenizerConfigFiles& files, const std::filesystem::path& file,
                                const SlowSpecials& s, const Vocab& vocab, const TokenizerFacts& facts);
// The special-token strings of a slow tokenizer in its TokenizerConfig.
void set_special_strings(TokenizerConfig& c, const SlowSpecials& s);

// The roles of an encoder's template tokens: [CLS]/<s> begins, [SEP]/</s> ends and separates.
SpecialTokens encoder_specials(int32_t cls, int32_t sep, int32_t pad);

// ModelError unless every id below `max_id` + 1 fits config.json's vocab_size.
void check_vocab_size(int64_t max_id, const TokenizerFacts& facts, const std::filesystem::path& file);

}  // namespace attnscan::detail
