#pragma once
// The tokenizer of a model directory, configured with what the model's family says of it
// (model/families/family.hpp: template, SentencePiece flavour) and the model's sizes.
#include <filesystem>

#include "model/model_config.hpp"
#include "tokenizer/tokenizer.hpp"

namespace attnscan {

// What the tokenizer must know of this model: its family's tokenizer facts, vocab_size, max_tokens().
// Throws ModelError when model_type names no family.
TokenizerFacts tokenizer_facts(const ModelConfig& model);

// Tokenizer::from_model_dir(dir, tokenizer_facts(model), file); `file` Auto reads the family's preferred file
// where the directory has it (the decoders: tokenizer.json).
Tokenizer load_tokenizer(const std::filesystem::path& dir, const ModelConfig& model,
                         TokenizerFile file = TokenizerFile::Auto);

}  // namespace attnscan
