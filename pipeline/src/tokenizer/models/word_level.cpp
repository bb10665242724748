// tokenizer.json's WordLevel model (the `tokenizers` crate's models/wordlevel): each pre-tokenized word
// is one token, its id from the vocabulary, else the unknown token's.
#include "tokenizer/files/tokenizer_json.hpp"
#include "tokenizer/models/subword_model.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

void FastSubwordModel::word_level(const NormalizedText& word, int32_t word_idx, SentenceTokens& out) const {
  std::string piece = unicode::encode(word.text());
  int32_t id = p_->vocab.find(piece);
  if (id < 0) {  // read_tokenizer_json checked that the unk token is in the vocabulary
    piece = p_->unk_token;
    id = p_->vocab.find(piece);
  }
  out.push(id, std::move(piece), word_idx, false, word.original(0, word.size()));
}

}  // namespace attnscan::detail
