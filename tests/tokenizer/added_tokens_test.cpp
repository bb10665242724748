// Added tokens flagged single_word (with lstrip and rstrip) as each Hugging Face library means them:
// transformers' slow tokenizers join the token to a neighbour that does not end (start) with a space,
// tokenizers' fast ones drop a match beside a word character (tokenizer/added_tokens.hpp,
// split_slow_added). Reference: tests/reference/make_added_token_fixtures.py.
#include <gtest/gtest.h>

#include <map>

#include "model/model_tokenizer.hpp"
#include "support/jsonl.hpp"
#include "support/test_paths.hpp"
#include "support/tokenizer_config.hpp"
#include "tokenizer/tokenizer.hpp"

using namespace attnscan;
using nlohmann::json;

TEST(AddedTokens, SingleWordAsEachHuggingFaceLibraryMeansIt) {
  const auto root = test::fixture_dir() / "added_tokens";
  if (!std::filesystem::exists(root / "rows.jsonl"))
    GTEST_SKIP() << root / "rows.jsonl" << " absent: run scripts/setup.sh (tests/reference/make_added_token_fixtures.py)";
  std::map<std::pair<std::string, std::string>, std::vector<json>> rows;  // (model, slow|fast) -> rows
  for (auto& row : test::read_jsonl(root / "rows.jsonl"))
    rows[{row.at("model").get<std::string>(), row.at("tokenizer").get<std::string>()}].push_back(std::move(row));
  ASSERT_FALSE(rows.empty());
  std::size_t slow_fast_differ = 0;
  for (const auto& [key, list] : rows) {
    const auto& [model, kind] = key;
    const auto dir = root / model;
    ModelConfig config;
    if (std::filesystem::exists(dir / "config.json")) {
      config = test::tokenizer_model_config(dir);
    } else {  // the trained tokenizers, named by family
      config.model_type = model;
      config.vocab_size = 3002;
      config.max_position_embeddings = 514;
    }
    config.vocab_size += 2;  // the two added tokens
    const Tokenizer tok = load_tokenizer(dir, config, kind == "fast" ? TokenizerFile::TokenizerJson : TokenizerFile::Slow);
    for (const auto& row : list) {
      const auto got = tok.tokenize(row.at("text").get<std::string>());
      EXPECT_EQ(got.ids, row.at("ids").get<std::vector<int32_t>>())
          << model << " " << kind << " " << row.at("text") << ": attnscan " << json(got.pieces).dump() << ", HF "
          << row.at("tokens").dump();
    }
    if (kind == "slow") {
      const auto& fast = rows.at({model, "fast"});
      for (std::size_t i = 0; i < list.size(); ++i) slow_fast_differ += list[i].at("ids") != fast[i].at("ids");
    }
  }
  EXPECT_GT(slow_fast_differ, 10u) << "the two meanings of single_word should differ on the fixture's texts";
}
