#pragma once
// WordPiece tokenizer that reproduces Hugging Face token for token, from either file a model
// directory carries:
//  - vocab.txt (+ tokenizer_config.json): the Python "slow" `BertTokenizer` / `MPNetTokenizer`:
//    special-token splitting, Python-style lowercasing, text cleaning, CJK splitting, NFC, accent
//    stripping, punctuation splitting, greedy longest-match WordPiece, `longest_first` truncation;
//  - tokenizer.json: the Rust "fast" tokenizer (normalizers, pre-tokenizers, added tokens, WordPiece,
//    post-processor), which differs from the slow one in a few places (no NFC, per-character
//    lowercasing, its own longest_first split); features it does not implement are refused.
// The special tokens around the sentences come from a PairTemplate (pair_template.hpp).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnscan/model_config.hpp"
#include "attnscan/pair_template.hpp"

namespace attnscan {

namespace detail {
struct FastPipeline;  // what tokenizer.json asks for (engine/tokenizer_json.hpp)
}

class Vocab {
 public:
  // One token per line, id = line number (0-based). Later duplicates win, as in HF.
  static Vocab load(const std::filesystem::path& vocab_txt);
  Vocab() = default;
  explicit Vocab(std::vector<std::string> tokens);
  // Token -> id entries (e.g. tokenizer.json's model.vocab); ids need not be contiguous.
  explicit Vocab(const std::vector<std::pair<std::string, int32_t>>& entries);

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

// The template's tokens around A (and B), e.g. `[CLS] A [SEP] B [SEP]` or `<s> A </s></s> B </s>`,
// and per-token metadata.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
  std::vector<uint8_t> segment;      // the sentence a token belongs to: 0 for the leading special, A and
                                     // the special(s) closing A; 1 for B and the specials after it
  std::vector<uint8_t> type_ids;     // what the model gets as token_type_ids (all 0 for RoBERTa/MPNet)
  std::vector<int32_t> word_index;   // word index within its own sentence; -1 for template specials
  std::vector<uint8_t> special;      // 1 for template specials and special tokens written in the text
  std::vector<std::string> words_a, words_b;
  std::size_t tokens_a = 0, tokens_b = 0;  // WordPieces kept from A and B
  std::size_t removed_a = 0, removed_b = 0;  // WordPieces removed by truncation
  bool truncated = false;

  std::size_t size() const { return ids.size(); }
};

// HF's two `longest_first` rules: which sentence loses the odd token when both must be cut.
enum class LongestFirst {
  Transformers,  // Python (slow tokenizers): the odd token comes off B
  Tokenizers,    // Rust (tokenizer.json): the longer sentence keeps the odd token (B when equal)
};

// Which tokenizer file of a model directory to read.
enum class TokenizerFile {
  Auto,           // vocab.txt when present (the slow tokenizer), else tokenizer.json
  VocabTxt,
  TokenizerJson,
};

class WordPieceTokenizer {
 public:
  // The slow tokenizer over a vocabulary: BERT template (`[CLS] A [SEP] B [SEP]`).
  WordPieceTokenizer(Vocab vocab, TokenizerConfig config);
  // The slow tokenizer with the template of the model family (`model_type`, see pair_template.hpp);
  // `extra_specials`: further added tokens split out of text (HF's added_tokens_decoder).
  WordPieceTokenizer(Vocab vocab, TokenizerConfig config, const std::string& model_type,
                     std::vector<std::string> extra_specials = {});
  // The tokenizer file of a model directory (see TokenizerFile). A directory with neither file is a
  // ModelError naming the files it could use.
  static WordPieceTokenizer from_model_dir(const std::filesystem::path& dir, const BertConfig& model,
                                           TokenizerFile file = TokenizerFile::Auto);
  // A tokenizer.json (the fast tokenizer); `config` gives the pad token and model_max_length.
  // Unsupported features are a ModelError naming the file and the feature.
  static WordPieceTokenizer from_tokenizer_json(const std::filesystem::path& tokenizer_json,
                                                const BertConfig& model, TokenizerConfig config);

  // Tokens of one sentence (no template tokens added). Throws Error on invalid UTF-8.
  SentenceTokens tokenize(std::string_view text) const;

  // Pair encoding with longest_first truncation to max_length (0: the model's maximum).
  Encoding encode_pair(std::string_view a, std::string_view b, std::size_t max_length = 0) const;
  Encoding encode_single(std::string_view a, std::size_t max_length = 0) const;

  const Vocab& vocab() const { return vocab_; }
  const TokenizerConfig& config() const { return config_; }
  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t pad_id() const { return pad_id_; }
  const PairTemplate& pair_template() const { return template_; }
  LongestFirst truncation() const { return truncation_; }
  // One line saying which file and what is used, e.g. "tokenizer.json (WordPiece, RobertaProcessing)".
  const std::string& source() const { return source_; }

  static constexpr std::size_t kMaxCharsPerWord = 100;

 private:
  WordPieceTokenizer() = default;
  void basic_words(std::string_view chunk, std::vector<std::string>& out) const;
  void wordpiece(const std::string& word, int32_t word_idx, bool special, SentenceTokens& out) const;
  SentenceTokens tokenize_fast(std::string_view text) const;
  Encoding assemble(const SentenceTokens& a, const SentenceTokens* b, std::size_t max_length) const;

  Vocab vocab_;
  TokenizerConfig config_;
  std::vector<std::string> specials_;  // special-token strings recognised inside text (slow)
  std::unordered_map<std::string, int32_t> special_ids_;
  std::shared_ptr<const detail::FastPipeline> fast_;  // set when read from tokenizer.json
  PairTemplate template_;
  LongestFirst truncation_ = LongestFirst::Transformers;
  std::string source_ = "vocabulary (BertTokenizer, BERT template)";
  std::string unk_token_ = "[UNK]", prefix_ = "##";
  std::size_t max_chars_ = kMaxCharsPerWord;
  int32_t cls_id_ = 0, sep_id_ = 0, pad_id_ = 0, unk_id_ = 0;
};

}  // namespace attnscan
