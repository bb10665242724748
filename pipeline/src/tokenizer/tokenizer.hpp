#pragma once
// The tokenizer of a model directory, reproducing Hugging Face token for token. One subword model
// kind per seam (tokenizer/models/subword_model.hpp), one recipe per file format (tokenizer/files/),
// the pair template, truncation and the Encoding shared:
//  - WordPiece (BERT, MPNet, ...):
//    vocab.txt (+ tokenizer_config.json): the Python "slow" `BertTokenizer` / `MPNetTokenizer`:
//    special-token splitting, Python-style lowercasing, text cleaning, CJK splitting, NFC, accent
//    stripping, punctuation splitting, greedy longest-match WordPiece, `longest_first` truncation;
//  - byte-level BPE (RoBERTa): vocab.json + merges.txt (+ tokenizer_config.json /
//    special_tokens_map.json): the slow `RobertaTokenizer` (added tokens split out of the text with
//    their lstrip/rstrip, add_prefix_space, the GPT-2 split pattern, byte-to-unicode map, BPE merges);
//  - Unigram (SentencePiece: XLM-R, ALBERT): the `*.model` file (read by attnscan itself), as the slow
//    `XLMRobertaTokenizer` (fairseq's id offset) and `AlbertTokenizer` (remove_space, NFKD without
//    combining marks, lowercasing, the "9," piece split) use it;
//  - tokenizer.json: the Rust "fast" tokenizer of any of the three (normalizers, pre-tokenizers, added
//    tokens, model, post-processor), which differs from the slow one in places (no NFC, per-character
//    lowercasing, its own longest_first split, SentencePiece's normalizer applied per grapheme);
//    features it does not implement are refused with a ModelError naming the file and the feature.
// The special tokens around the sentences come from a PairTemplate (pair_template.hpp).
//
// What a "word" is (SentenceTokens::word_index, Encoding::words_a/b), per kind:
//  - WordPiece: a token of the basic tokenizer / the pre-tokenizer (a run of non-punctuation
//    characters, one punctuation character, one CJK character); its pieces after the first start "##";
//  - byte-level BPE: one chunk of the GPT-2 split pattern (" cats", "'s", "!!"), so the piece that
//    starts with "Ġ" (the space) starts a word; word text is the chunk decoded, without its leading space;
//  - Unigram: the pieces from one "▁"-initial piece to the next (in tokenizer.json: one Metaspace
//    split), e.g. "▁straw" "berries"; word text is the pieces joined without "▁";
//  - every kind: a special or added token written in the text is a word of its own.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/processors/pair_template.hpp"
#include "tokenizer/tokenizer_config.hpp"

namespace attnscan {

namespace detail {
class SubwordModel;  // one sentence to its pieces, per model kind (tokenizer/models/subword_model.hpp)
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
  int32_t find(const std::string& token) const;
  int32_t find(const char* token) const { return find(std::string_view(token)); }
  const std::string& token(int32_t id) const { return tokens_.at(static_cast<std::size_t>(id)); }
  std::size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
};

// Characters [start, end) of a sentence: Unicode code points (Python str indices); -1 where none.
struct CharSpan {
  int64_t start = -1, end = -1;
  bool operator==(const CharSpan& o) const { return start == o.start && end == o.end; }
};

// Tokens of one sentence. Each piece belongs to a word (see the top of this file).
struct SentenceTokens {
  std::vector<int32_t> ids;
  std::vector<std::string> pieces;     // vocabulary text, e.g. "straw", "##berries"; "Ġstraw"; "▁straw"
  std::vector<int32_t> word_index;     // index into `words`
  std::vector<uint8_t> special;        // 1 for special tokens written in the text, e.g. "[SEP]"
  std::vector<std::string> words;      // normalised word text (lowercased etc. as the model sees it)
  std::vector<CharSpan> offsets;       // the characters of the sentence each piece stands for (HF's
                                       // offset_mapping), tracked through every stage (normalized_text.hpp)

  void push(int32_t id, std::string piece, int32_t word, bool is_special, CharSpan span);
  void resize(std::size_t n);  // the first n pieces kept
};

// The template's tokens around A (and B), e.g. `[CLS] A [SEP] B [SEP]` or `<s> A </s></s> B </s>`,
// and per-token metadata. A pair joined as one text (PairEncoding::Joined: `<bos> A \n B`) has the same
// fields: each token in its own sentence, the separator's tokens special and closing A, as [SEP] does.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
  std::vector<uint8_t> segment;      // the sentence a token belongs to: 0 for the leading special, A and
                                     // the special(s) closing A; 1 for B and the specials after it
  std::vector<uint8_t> type_ids;     // what the model gets as token_type_ids (all 0 for RoBERTa/MPNet)
  std::vector<int32_t> word_index;   // word index within its own sentence; -1 for template specials
  std::vector<uint8_t> special;      // 1 for template specials and special tokens written in the text
  std::vector<CharSpan> offsets;     // characters of its own sentence (SentenceTokens::offsets); -1 for
                                     // template specials
  std::vector<std::string> words_a, words_b;
  std::size_t tokens_a = 0, tokens_b = 0;  // pieces kept from A and B
  std::size_t removed_a = 0, removed_b = 0;  // pieces removed by truncation (a joined pair's separator: A's)
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
  Auto,           // the slow files when present (vocab.txt, vocab.json + merges.txt, *.model), else tokenizer.json
  Slow,           // whichever slow file the directory has
  VocabTxt,       // WordPiece
  VocabMerges,    // byte-level BPE: vocab.json + merges.txt
  SentencePiece,  // Unigram: the SentencePiece model (sentencepiece.bpe.model, spiece.model, ...)
  TokenizerJson,
};

// Whether `dir` has a file Tokenizer::from_model_dir can read, and the list of those files (for messages).
bool has_tokenizer_file(const std::filesystem::path& dir);
std::string tokenizer_files_wanted();

// The `tokenizer` option (run) and `--tokenizer` (attend): "auto", "slow" or "tokenizer.json"; Error otherwise.
TokenizerFile tokenizer_file_named(const std::string& choice);

// The subword model a tokenizer uses.
// WordLevel: one token per pre-tokenized word (tokenizer.json only). Bpe: BPE over characters, not bytes
// (tokenizer.json without a ByteLevel pre-tokenizer: Llama 2, Gemma; "▁" for spaces, <0xNN> byte tokens).
enum class SubwordKind { WordPiece, ByteLevelBpe, Unigram, WordLevel, Bpe };
const char* to_string(SubwordKind kind);
std::optional<SubwordKind> subword_kind_named(const std::string& name);  // the inverse of to_string

// How a vocabulary token reads to a person (the report): byte-level BPE's GPT-2 characters decoded
// to the text they stand for, "Ġ" (a leading space) shown as SentencePiece's word-start "▁", a token of
// only spaces as "␣", bytes of a character split between tokens as <0xNN>, line breaks and tabs as "↵",
// "␍", "⇥"; WordPiece ("##berries") and Unigram ("▁straw") tokens otherwise as they are.
std::string readable_token(const std::string& token, SubwordKind kind);

// The special tokens by the part they play, each an id or none (std::nullopt). Which of them the template
// puts around sentences is the PairTemplate's business (Tokenizer::pair_template()); these say which
// token is which, for the model layer and the detectors.
struct SpecialTokens {
  // Opens a sequence: the template's first token ([CLS], <s>, <|begin_of_text|>, <bos>), else the files'
  // bos_token when the vocabulary has it (GPT-2: <|endoftext|>, which its template does not add).
  std::optional<int32_t> begin;
  // Closes one: the single-sentence template's last token ([SEP], </s>), else eos_token (<|endoftext|>,
  // <|end_of_text|>, <eos>).
  std::optional<int32_t> end;
  // Between A and B in the pair template ([SEP], </s>); none where the template has nothing there or
  // only the begin token again (decoders).
  std::optional<int32_t> separator;
  // pad_token; none for GPT-2, Llama 3, Pythia and others without one.
  std::optional<int32_t> pad;
};

// The text between A and B where a pair is joined (PairEncoding::Joined) and none is chosen
// (the run's dataset.pair_separator defaults to it).
inline constexpr const char* kDefaultPairSeparator = "\n";

// What every file recipe (tokenizer/files/recipes.hpp) builds: the parts of a Tokenizer.
struct TokenizerParts {
  std::shared_ptr<const detail::SubwordModel> model;
  SubwordKind kind = SubwordKind::WordPiece;
  Vocab vocab;
  TokenizerConfig config;
  PairTemplate pair_template;
  LongestFirst truncation = LongestFirst::Transformers;
  std::string source;  // see Tokenizer::source
  SpecialTokens specials;
  bool cjk_isolated = false;  // the normalizer puts spaces around CJK characters (each is a word)
  PairEncoding pairs = PairEncoding::Template;  // the model family's (TokenizerFacts::pairs)
  std::string pair_separator = kDefaultPairSeparator;
};

class Tokenizer {
 public:
  explicit Tokenizer(TokenizerParts parts);
  // The slow WordPiece tokenizer over a vocabulary with the given template (`[CLS] A [SEP] B [SEP]` by
  // default); `extra_specials`: further added tokens split out of text (added_tokens_decoder).
  Tokenizer(Vocab vocab, TokenizerConfig config, TemplateKind pair_template = TemplateKind::Bert,
            std::vector<std::string> extra_specials = {});
  // The tokenizer file of a model directory (see TokenizerFile), for the model `facts` describe
  // (model/model_tokenizer.hpp gives them for a config.json). tokenizer_config.json and
  // special_tokens_map.json are read once. A directory with none of the files is a ModelError naming
  // the files it could use.
  static Tokenizer from_model_dir(const std::filesystem::path& dir, const TokenizerFacts& facts,
                                  TokenizerFile file = TokenizerFile::Auto);
  // A tokenizer.json (the fast tokenizer); `config` gives the pad token and model_max_length.
  // Unsupported features are a ModelError naming the file and the feature.
  static Tokenizer from_tokenizer_json(const std::filesystem::path& tokenizer_json, const TokenizerFacts& facts,
                                       TokenizerConfig config);

  // Tokens of one sentence (no template tokens added). Throws Error on invalid UTF-8.
  SentenceTokens tokenize(std::string_view text) const;
  SubwordKind kind() const { return p_.kind; }

  // A pair as pair_encoding() says, truncated to max_length (0: the model's maximum):
  //  - Template: A and B tokenized apart in the pair template, longest_first truncation;
  //  - Joined: a + pair_separator() + b tokenized as one text in the single-sentence template (ids equal
  //    encode_single of that text), each token given to its sentence by its characters: from b's first
  //    character on B's, up to a's last A's; the separator's tokens, and a token reaching across a's end,
  //    are special (word_index -1, offsets -1/-1) and close A. Offsets and word_index are within the
  //    token's own sentence; a word of the text with tokens in both sentences counts in each, its text there
  //    the characters its tokens cover. type_ids all 0. Truncation cuts the joined text's end: B's tokens,
  //    then the separator's, then A's.
  Encoding encode_pair(std::string_view a, std::string_view b, std::size_t max_length = 0) const;
  Encoding encode_single(std::string_view a, std::size_t max_length = 0) const;
  // Sentences given as words (e.g. a treebank's): each word is tokenized on its own (byte-level BPE:
  // words after the first with their leading space), so word_index numbers the given words and a word
  // the tokenizer would split further (e.g. "U.S.") stays one word. No b: a single sentence. Offsets are
  // into the words joined by single spaces (the text a CoNLL-U dataset stores for the sentence). A pair
  // whose encoding is Joined: A's tokens, the separator's, B's, in the single-sentence template.
  Encoding encode_words(const std::vector<std::string>& a, const std::vector<std::string>* b,
                        std::size_t max_length = 0) const;

  const Vocab& vocab() const { return p_.vocab; }
  const TokenizerConfig& config() const { return p_.config; }
  const SpecialTokens& specials() const { return p_.specials; }
  // The id a batch is padded with: pad, else end, else begin, else 0 (padded positions are masked, so
  // without a pad token any valid id serves).
  int32_t pad_id() const;
  // The begin and separator roles by their BERT names; -1 when the tokenizer has none.
  int32_t cls_id() const { return p_.specials.begin.value_or(-1); }
  int32_t sep_id() const { return p_.specials.separator.value_or(-1); }
  const PairTemplate& pair_template() const { return p_.pair_template; }
  PairEncoding pair_encoding() const { return p_.pairs; }
  const std::string& pair_separator() const { return p_.pair_separator; }
  // The text a Joined pair has between A and B; Error when it is not valid UTF-8.
  void set_pair_separator(std::string separator);
  // The template's tokens a pair (pair true) or a single sentence gets: a Joined pair the single template's.
  std::size_t specials_added(bool pair) const;
  LongestFirst truncation() const { return p_.truncation; }
  bool cjk_isolated() const { return p_.cjk_isolated; }
  // One line saying which file and what is used, e.g. "tokenizer.json (WordPiece, RobertaProcessing)",
  // "vocab.json + merges.txt (byte-level BPE, RobertaTokenizer, RoBERTa template)".
  const std::string& source() const { return p_.source; }

  static constexpr std::size_t kMaxCharsPerWord = 100;

 private:
  // Takes the pieces and words of a and b over (they are left empty).
  Encoding assemble(SentenceTokens& a, SentenceTokens* b, std::size_t max_length) const;
  // Joined pairs (joined_pair.cpp).
  Encoding encode_joined(std::string_view a, std::string_view b, std::size_t max_length) const;
  Encoding encode_joined_words(const std::vector<std::string>& a, const std::vector<std::string>& b,
                               std::size_t max_length) const;
  SentenceTokens tokenize_words(const std::vector<std::string>& words) const;

  TokenizerParts p_;
};

}  // namespace attnscan
