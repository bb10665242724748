#include "model/model_tokenizer.hpp"

#include "model/families/family.hpp"

namespace attnscan {

TokenizerFacts tokenizer_facts(const ModelConfig& model) {
  const ModelFamily& family = find_family(model.model_type, "config.json");
  TokenizerFacts facts;
  facts.model_type = family.model_type;
  facts.vocab_size = model.vocab_size;
  facts.max_tokens = model.max_tokens();
  facts.slow_template = family.slow_template;
  facts.sentencepiece = family.sentencepiece;
  facts.pairs = family.pairs;
  return facts;
}

Tokenizer load_tokenizer(const std::filesystem::path& dir, const ModelConfig& model, TokenizerFile file) {
  const ModelFamily& family = find_family(model.model_type, "config.json");
  if (file == TokenizerFile::Auto && family.preferred_tokenizer == TokenizerFile::TokenizerJson &&
      std::filesystem::exists(dir / "tokenizer.json"))
    file = TokenizerFile::TokenizerJson;
  return Tokenizer::from_model_dir(dir, tokenizer_facts(model), file);
}

}  // namespace attnscan
