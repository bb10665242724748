#pragma once
// WordPiece tokenizer that reproduces Hugging Face `BertTokenizer` (the Python "slow" tokenizer)
// token for token: special-token splitting, Python-style lowercasing, text cleaning, CJK splitting,
// NFC, accent stripping, punctuation splitting, greedy longest-match WordPiece, pair encoding and
// `longest_first` truncation.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnscan/model_config.hpp"

namespace attnscan {

class Vocab {
 public:
  // One token per line, id = line number (0-based). Later duplicates win, as in HF.
  static Vocab load(const std::filesystem::path& vocab_txt);
  Vocab() = default;
  explicit Vocab(std::vector<std::string> tokens);

  int32_t find(std::string_view token) const;  // -1 when absent
  const std::string& token(int32_t id) const { return tokens_.at(static_cast<std::size_t>(id)); }
  std::size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
};

// Tokens of one sentence. Each WordPiece belongs to a word: a token of the basic tokenizer (a run
// of non-punctuation characters, one punctuation character, one CJK character, or a special token
// written in the text).
struct SentenceTokens {
  std::vector<int32_t> ids;
  std::vector<std::string> pieces;     // WordPiece text, e.g. "straw", "##berries"
  std::vector<int32_t> word_index;     // index into `words`
  std::vector<uint8_t> special;        // 1 for special tokens written in the text, e.g. "[SEP]"
  std::vector<std::string> words;      // normalised word text (lowercased etc. as the model sees it)
};

// `[CLS] A [SEP] B [SEP]` (or `[CLS] A [SEP]` for a single sentence) and per-token metadata.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
  std::vector<uint8_t> segment;      // token_type_ids: 0 for [CLS] A [SEP], 1 for B [SEP]
  std::vector<int32_t> word_index;   // word index within its own sentence; -1 for added [CLS]/[SEP]
  std::vector<uint8_t> special;      // 1 for [CLS]/[SEP] and special tokens written in the text
  std::vector<std::string> words_a, words_b;
  std::size_t tokens_a = 0, tokens_b = 0;  // WordPieces kept from A and B
  std::size_t removed_a = 0, removed_b = 0;  // WordPieces removed by truncation
  bool truncated = false;

  std::size_t size() const { return ids.size(); }
};

class WordPieceTokenizer {
 public:
  WordPieceTokenizer(Vocab vocab, TokenizerConfig config);
  // vocab.txt + tokenizer_config.json of a model directory.
  static WordPieceTokenizer from_model_dir(const std::filesystem::path& dir, const BertConfig& model);

  // Tokens of one sentence (no [CLS]/[SEP] added). Throws Error on invalid UTF-8.
  SentenceTokens tokenize(std::string_view text) const;

  // Pair encoding with longest_first truncation to max_length (0: the model's maximum).
  Encoding encode_pair(std::string_view a, std::string_view b, std::size_t max_length = 0) const;
  Encoding encode_single(std::string_view a, std::size_t max_length = 0) const;

  const Vocab& vocab() const { return vocab_; }
  const TokenizerConfig& config() const { return config_; }
  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t pad_id() const { return pad_id_; }

  static constexpr std::size_t kMaxCharsPerWord = 100;

 private:
  void basic_words(std::string_view chunk, std::vector<std::string>& out) const;
  void wordpiece(const std::string& word, int32_t word_idx, SentenceTokens& out) const;
  Encoding assemble(const SentenceTokens& a, const SentenceTokens* b, std::size_t max_length) const;

  Vocab vocab_;
  TokenizerConfig config_;
  std::vector<std::string> specials_;  // special-token strings recognised inside text
  int32_t cls_id_ = 0, sep_id_ = 0, pad_id_ = 0, unk_id_ = 0;
};

}  // namespace attnscan
