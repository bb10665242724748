// Which tokenizer file of a model directory to read, and reading it (Tokenizer::from_model_dir).
#include "common/error.hpp"
#include "tokenizer/files/recipes.hpp"

namespace attnscan {

namespace {

// The slow tokenizer's file of each kind in `dir`, "" when absent.
constexpr const char* kSentencePieceFiles[] = {"sentencepiece.bpe.model", "spiece.model", "spm.model",
                                               "sentencepiece.model", "tokenizer.model"};

std::filesystem::path sentencepiece_file(const std::filesystem::path& dir) {
  for (const char* name : kSentencePieceFiles)
    if (std::filesystem::exists(dir / name)) return dir / name;
  return {};
}

constexpr const char* kFilesWanted =
    "vocab.txt (WordPiece, the slow BertTokenizer), vocab.json + merges.txt (byte-level BPE, the slow "
    "RobertaTokenizer), a SentencePiece model: sentencepiece.bpe.model, spiece.model, spm.model, sentencepiece.model "
    "or tokenizer.model (Unigram, the slow XLMRobertaTokenizer / AlbertTokenizer / DebertaV2Tokenizer), or tokenizer.json (the fast "
    "tokenizer: WordPiece, BPE or Unigram)";

// Auto and Slow resolved to the file kind the directory has.
TokenizerFile resolve(const std::filesystem::path& dir, TokenizerFile file) {
  if (file != TokenizerFile::Auto && file != TokenizerFile::Slow) return file;
  namespace fs = std::filesystem;
  if (fs::exists(dir / "vocab.txt")) return TokenizerFile::VocabTxt;
  if (fs::exists(dir / "vocab.json") && fs::exists(dir / "merges.txt")) return TokenizerFile::VocabMerges;
  if (!sentencepiece_file(dir).empty()) return TokenizerFile::SentencePiece;
  if (file == TokenizerFile::Auto && fs::exists(dir / "tokenizer.json")) return TokenizerFile::TokenizerJson;
  throw ModelError(dir.string() + ": no " + (file == TokenizerFile::Slow ? "slow " : "") +
                   "tokenizer file: attnscan reads " + kFilesWanted + "; none is there");
}

// A recipe's parts as the model's facts say pairs are encoded.
Tokenizer with_pairs(TokenizerParts parts, const TokenizerFacts& facts) {
  parts.pairs = facts.pairs;
  return Tokenizer(std::move(parts));
}

}  // namespace

bool has_tokenizer_file(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  return fs::exists(dir / "vocab.txt") || fs::exists(dir / "tokenizer.json") || !sentencepiece_file(dir).empty() ||
         (fs::exists(dir / "vocab.json") && fs::exists(dir / "merges.txt"));
}

std::string tokenizer_files_wanted() { return kFilesWanted; }

TokenizerFile tokenizer_file_named(const std::string& choice) {
  if (choice == "auto") return TokenizerFile::Auto;
  if (choice == "slow") return TokenizerFile::Slow;
  if (choice == "tokenizer.json") return TokenizerFile::TokenizerJson;
  throw Error("tokenizer '" + choice + "': expected auto, slow or tokenizer.json");
}

Tokenizer Tokenizer::from_model_dir(const std::filesystem::path& dir, const TokenizerFacts& facts, TokenizerFile file) {
  file = resolve(dir, file);
  const TokenizerConfigFiles files = read_tokenizer_config_files(dir);
  switch (file) {
    case TokenizerFile::TokenizerJson: {
      const auto tokenizer_json = dir / "tokenizer.json";
      if (!std::filesystem::exists(tokenizer_json))
        throw ModelError(tokenizer_json.string() + ": missing from the model directory");
      return with_pairs(detail::tokenizer_json_recipe(tokenizer_json, facts, tokenizer_config(files, facts),
                                                      files.has_config()),
                        facts);
    }
    case TokenizerFile::VocabMerges: return with_pairs(detail::vocab_merges_recipe(dir, facts, files), facts);
    case TokenizerFile::SentencePiece: {
      const auto spm = sentencepiece_file(dir);
      if (spm.empty())
        throw ModelError(dir.string() + ": no SentencePiece model (sentencepiece.bpe.model, spiece.model, "
                         "spm.model, sentencepiece.model or tokenizer.model) in the model directory");
      return with_pairs(detail::sentencepiece_recipe(spm, facts, files), facts);
    }
    default: return with_pairs(detail::vocab_txt_recipe(dir, facts, files), facts);
  }
}

Tokenizer Tokenizer::from_tokenizer_json(const std::filesystem::path& tokenizer_json, const TokenizerFacts& facts,
                                         TokenizerConfig config) {
  const bool has_config = std::filesystem::exists(tokenizer_json.parent_path() / "tokenizer_config.json");
  return with_pairs(detail::tokenizer_json_recipe(tokenizer_json, facts, std::move(config), has_config), facts);
}

}  // namespace attnscan
