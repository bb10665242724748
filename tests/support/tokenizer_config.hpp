#pragma once
// What a tokenizer needs of a model's config.json, for the tokenizer parity tests.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "model/model_config.hpp"

namespace attnscan::test {

// model_type, vocab_size, max_position_embeddings of dir/config.json. Families load_model_config
// does not accept are read directly: the tokenizer does not depend on the encoder supporting them.
inline ModelConfig tokenizer_model_config(const std::filesystem::path& dir) {
  try {
    return load_model_config(dir / "config.json");
  } catch (const ModelError& e) {
    std::cout << "note: " << e.what() << "; reading only the tokenizer's fields of config.json\n";
    auto j = nlohmann::json::parse(std::ifstream(dir / "config.json"));
    ModelConfig c;
    c.model_type = j.at("model_type").get<std::string>();
    c.vocab_size = j.at("vocab_size").get<int64_t>();
    c.max_position_embeddings = j.at("max_position_embeddings").get<int64_t>();
    return c;
  }
}

}  // namespace attnscan::test
