#pragma once
// The seam between the shared part of the tokenizer (template, truncation, Encoding: tokenizer.cpp)
// and each subword model kind: one sentence in, its pieces, ids and words out.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/models/unigram.hpp"
#include "tokenizer/normalized_text.hpp"
#include "tokenizer/tokenizer.hpp"

namespace attnscan::detail {

struct FastPipeline;  // what tokenizer.json asks for (tokenizer/files/tokenizer_json.hpp)

class SubwordModel {
 public:
  virtual ~SubwordModel() = default;
  // Throws Error on invalid UTF-8.
  virtual SentenceTokens tokenize(std::string_view text) const = 0;
};

// An added token the slow (Python) tokenizer splits out of text: transformers' tokens_trie with the
// AddedToken's lstrip/rstrip (the text beside it loses its whitespace, as str.rstrip()/lstrip()).
struct SlowAddedToken {
  std::string content;
  int32_t id = -1;  // -1: the vocabulary's (wordpiece_slow_parts)
  bool lstrip = false, rstrip = false, special = true, single_word = false;
  std::u32string pattern;  // content decoded, for split_slow_added (with_patterns)
};
// `tokens` with their patterns filled in (a model does it once).
std::vector<SlowAddedToken> with_patterns(std::vector<SlowAddedToken> tokens);

// transformers' PreTrainedTokenizer.tokenize: text chunks (index -1) and added tokens (their index),
// leftmost-longest matches, stripped neighbours, single_word tokens joined to a neighbour as text,
// empty chunks dropped.
// `text`: the chunk, or the characters an added token matched (stripped whitespace included).
struct SlowChunk {
  int added = -1;
  NormalizedText text;
};
std::vector<SlowChunk> split_slow_added(const NormalizedText& text, const std::vector<SlowAddedToken>& tokens);

// transformers' PreTrainedTokenizer.tokenize with do_lower_case: every character lowercased alone
// (Python's str.lower()) except the `keep` strings (special tokens) written in the text, longest match first.
void lower_except(NormalizedText& text, const std::vector<std::string>& keep);

// Python's str.split() (no arguments) of UTF-8 text.
std::vector<std::string> python_split_utf8(std::string_view text);

// Appends an added token as a word of its own, covering `span` of the sentence.
void push_added(SentenceTokens& out, const std::string& content, int32_t id, bool special, CharSpan span);

// ---------------------------------------------------------------------------------------------
// WordPiece (wordpiece.cpp): the slow BertTokenizer over vocab.txt, or tokenizer.json's WordPiece.
class WordPieceModel : public SubwordModel {
 public:
  // Slow: `specials` the special tokens split out of text (each must be in `vocab`).
  // `specials`: the special and added tokens split out of the text (with their ids and single_word).
  WordPieceModel(Vocab vocab, TokenizerConfig config, std::vector<SlowAddedToken> specials);
  // Fast: tokenizer.json.
  explicit WordPieceModel(std::shared_ptr<const FastPipeline> fast);
  SentenceTokens tokenize(std::string_view text) const override;

 private:
  void basic_words(NormalizedText chunk, std::vector<NormalizedText>& out) const;
  // Pushes the word's pieces; returns the word's UTF-8 text.
  std::string wordpiece(const NormalizedText& word, int32_t word_idx, SentenceTokens& out) const;
  void push_special(const NormalizedText& text, SentenceTokens& out) const;  // a special written in the text
  SentenceTokens tokenize_fast(std::string_view text) const;

  Vocab vocab_;
  TokenizerConfig config_;
  std::vector<std::string> specials_;
  std::vector<SlowAddedToken> slow_specials_;  // specials_ for split_slow_added (no lstrip/rstrip: the basic tokenizer drops whitespace)
  std::unordered_map<std::string, int32_t> special_ids_;
  std::shared_ptr<const FastPipeline> fast_;
  std::string unk_token_ = "[UNK]", prefix_ = "##";
  std::size_t max_chars_ = Tokenizer::kMaxCharsPerWord;
  int32_t unk_id_ = 0;
};

// ---------------------------------------------------------------------------------------------
// BPE merges (bpe.cpp): the pair of lowest rank merged first, every occurrence left to right, as
// transformers' RobertaTokenizer.bpe (and, for merges lists where a merge's parts are made by earlier
// merges, as the `tokenizers` crate's priority queue).
class BpeMerges {
 public:
  BpeMerges() = default;
  explicit BpeMerges(const std::vector<std::pair<std::string, std::string>>& merges);
  // `symbols` (one character each to start with) merged in place.
  void merge(std::vector<std::string>& symbols) const;

 private:
  struct Merge {
    int32_t rank, result;  // result: the merged symbol's id
  };
  int32_t intern(const std::string& symbol);
  static uint64_t pair_key(int32_t a, int32_t b) {
    return static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32 | static_cast<uint32_t>(b);
  }

  // Every symbol a merge reads or makes gets an id, so the merge loop compares and hashes integers.
  std::unordered_map<std::string, int32_t> symbol_ids_;
  std::vector<std::string> symbols_;              // id -> symbol
  std::unordered_map<uint64_t, Merge> merges_;  // (left id, right id) -> rank and result
};

// The slow RobertaTokenizer over vocab.json + merges.txt.
class RobertaSlowModel : public SubwordModel {
 public:
  RobertaSlowModel(Vocab vocab, BpeMerges merges, std::vector<SlowAddedToken> added, int32_t unk_id,
                   bool add_prefix_space);
  SentenceTokens tokenize(std::string_view text) const override;

 private:
  Vocab vocab_;
  BpeMerges merges_;
  std::vector<SlowAddedToken> added_;
  int32_t unk_id_;
  bool add_prefix_space_;
};

// ---------------------------------------------------------------------------------------------
// tokenizer.json with a BPE, Unigram or WordLevel model (fast_model.cpp, word_level.cpp): added tokens, normalizers,
// pre-tokenizers (one word per pre-tokenized piece, as HF's word_ids), then the model per piece.
class FastSubwordModel : public SubwordModel {
 public:
  explicit FastSubwordModel(std::shared_ptr<const FastPipeline> p);
  SentenceTokens tokenize(std::string_view text) const override;

 private:
  void bpe(const NormalizedText& word, int32_t word_idx, SentenceTokens& out) const;
  void unigram(const NormalizedText& word, int32_t word_idx, SentenceTokens& out) const;
  void word_level(const NormalizedText& word, int32_t word_idx, SentenceTokens& out) const;  // word_level.cpp

  std::shared_ptr<const FastPipeline> p_;
  BpeMerges merges_;
  ByteTrie pieces_;  // Unigram: the vocab's pieces -> ids (models/unigram.hpp)
  double min_score_ = 0;
};

// ---------------------------------------------------------------------------------------------
// SentencePiece models (sentencepiece_slow.cpp over sentencepiece_model.hpp, attnscan's own reader
// and encoder of `*.model` files), as the slow XLMRobertaTokenizer (fairseq's ids: <s> 0, <pad> 1,
// </s> 2, <unk> 3, SentencePiece's ids + 1, <mask> last), AlbertTokenizer (its own preprocessing,
// the "9," split) and DebertaV2Tokenizer (SentencePiece's pieces and ids as they are) use them.
class SentencePieceSlow : public SubwordModel {
 public:
  enum class Flavour { XlmRoberta, Albert, Deberta };
  struct Options {
    Flavour flavour = Flavour::XlmRoberta;
    bool do_lower_case = false;                        // ALBERT, DeBERTa
    bool remove_space = true, keep_accents = false;    // ALBERT
    std::vector<std::string> lowercase_skip;  // special tokens kept as written when lowercasing
  };
  // The ids as HF's slow tokenizer numbers them (id -> piece); the added tokens override.
  virtual Vocab vocab() const = 0;
  virtual void set_added(std::vector<SlowAddedToken> added) = 0;
};

// Loads `model_file` (ModelError naming it, and the field, when it does not load or holds what
// attnscan does not implement).
std::shared_ptr<SentencePieceSlow> load_sentencepiece_slow(const std::filesystem::path& model_file,
                                                           SentencePieceSlow::Options options);

}  // namespace attnscan::detail
