// Byte-level BPE and Unigram (SentencePiece) tokenizers: parity with Hugging Face's slow and fast
// tokenizers on the tokenizers trained at set-up (tests/reference/train_tokenizers.py; reference rows
// from tests/reference/make_subword_fixtures.py), word boundaries, the file chosen, and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>

#include "common/error.hpp"
#include "common/json_file.hpp"
#include "tokenizer/tokenizer.hpp"
#include "support/jsonl.hpp"
#include "support/test_paths.hpp"
#include "model/model_tokenizer.hpp"

using namespace attnscan;
using nlohmann::json;

namespace {

std::filesystem::path trained(const std::string& name) { return test::fixture_dir() / "trained_tokenizers" / name; }

ModelConfig config_for(const std::string& model_type) {
  ModelConfig c;
  c.model_type = model_type;
  c.vocab_size = 3002;  // the trained vocabularies (3000 pieces; XLM-R adds <pad> and <mask>)
  c.max_position_embeddings = 514;
  return c;
}

// The directories are named by family; the WordLevel tokenizer is a BERT model's.
std::string model_type_of(const std::string& dir) { return dir == "wordlevel" ? "bert" : dir; }

SubwordKind kind_of(const std::string& dir) {
  if (dir == "roberta" || dir == "modernbert") return SubwordKind::ByteLevelBpe;
  return dir == "wordlevel" ? SubwordKind::WordLevel : SubwordKind::Unigram;
}

// A copy of a trained directory holding only `keep` (to choose the file read).
std::filesystem::path copy_of(const std::string& name, const std::vector<std::string>& keep, const std::string& tag) {
  auto dir = test::scratch_dir("subword_" + tag);
  for (const auto& f : keep)
    if (std::filesystem::exists(trained(name) / f)) std::filesystem::copy_file(trained(name) / f, dir / f);
  return dir;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

const test::TokenizerReference& reference() {  // "roberta/slow" -> rows
  static const auto r = test::read_tokenizer_reference(test::fixture_dir() / "subword_tokenizers.jsonl",
                                                       "tests/reference/make_subword_fixtures.py");
  return r;
}

struct ParityCase {
  std::string model, kind;  // kind: "slow" (vocab.json + merges.txt, *.model) or "fast" (tokenizer.json)
};

void PrintTo(const ParityCase& c, std::ostream* os) { *os << c.model << " (" << c.kind << ")"; }

std::string case_name(const testing::TestParamInfo<ParityCase>& info) {
  std::string s = info.param.model + "_" + info.param.kind;
  for (auto& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class SubwordHfParity : public testing::TestWithParam<ParityCase> {};

}  // namespace

// Every reference row: ids, tokens (convert_ids_to_tokens) and, for pairs, the type ids; for fast
// rows also HF's word_ids (sentences) and sequence_ids (pairs).
TEST_P(SubwordHfParity, SameIdsTokensAndTypesAsHuggingFace) {
  const auto& p = GetParam();
  const auto& ref = reference();
  if (!ref.loaded) GTEST_SKIP() << ref.missing;
  auto it = ref.rows.find(p.model + "/" + p.kind);
  if (it == ref.rows.end())
    GTEST_SKIP() << "no " << p.kind << " rows for " << p.model << " in " << test::fixture_dir() / "subword_tokenizers.jsonl"
                 << " (trained tokenizer missing when it was generated)";
  if (!std::filesystem::exists(trained(p.model)))
    GTEST_SKIP() << "trained tokenizer directory " << trained(p.model) << " missing (tests/reference/train_tokenizers.py)";
  const auto tok = load_tokenizer(trained(p.model), config_for(model_type_of(p.model)),
                                             p.kind == "fast" ? TokenizerFile::TokenizerJson : TokenizerFile::Slow);
  std::cout << p.model << " " << p.kind << ": " << tok.source() << "\n";
  EXPECT_EQ(tok.kind(), kind_of(p.model));
  std::size_t sentences = 0, pairs = 0, truncated = 0, words_checked = 0;
  int failures = 0;
  auto fail = [&](const json& row, const std::string& what, const std::string& got) {
    if (++failures <= 8) ADD_FAILURE() << p.model << " " << p.kind << ": " << what << " differ from HF for " << row.dump()
                                       << "\n  attnscan: " << got;
  };
  for (const auto& row : it->second) {
    const auto want_ids = row["ids"].get<std::vector<int32_t>>();
    const auto want_tokens = row["tokens"].get<std::vector<std::string>>();
    if (row["kind"] == "sentence") {
      ++sentences;
      const auto t = tok.tokenize(row["text"].get<std::string>());
      if (t.ids != want_ids) fail(row, "ids", json(t.ids).dump() + " " + json(t.pieces).dump());
      else if (t.pieces != want_tokens) fail(row, "tokens", json(t.pieces).dump());
      else if (row.contains("word_ids") && t.word_index != row["word_ids"].get<std::vector<int32_t>>())
        fail(row, "word_index", json(t.word_index).dump());
      else words_checked += row.contains("word_ids");
      continue;
    }
    ++pairs;
    const auto e = tok.encode_pair(row["a"].get<std::string>(), row["b"].get<std::string>(),
                                   row["max_length"].get<std::size_t>());
    truncated += e.truncated;
    if (e.ids != want_ids) { fail(row, "pair ids", json(e.ids).dump() + " " + json(e.tokens).dump()); continue; }
    if (e.tokens != want_tokens) { fail(row, "pair tokens", json(e.tokens).dump()); continue; }
    if (!row.contains("type_ids")) continue;
    if (e.type_ids != row["type_ids"].get<std::vector<uint8_t>>()) { fail(row, "type_ids", json(e.type_ids).dump()); continue; }
    const auto& seq = row["sequence_ids"];
    for (std::size_t i = 0; i < e.size(); ++i) {
      const bool templ = seq[i].is_null();
      if (templ != (e.word_index[i] < 0) || (!templ && seq[i].get<int>() != e.segment[i])) {
        fail(row, "segment/word_index at token " + std::to_string(i), json(e.segment).dump());
        break;
      }
    }
  }
  EXPECT_EQ(failures, 0) << failures << " of " << it->second.size() << " rows differ";
  EXPECT_GE(sentences, 1000u);
  EXPECT_GT(truncated, 50u);
  std::cout << p.model << " " << p.kind << ": " << it->second.size() << " rows checked (" << sentences << " sentences, "
            << pairs << " pairs, " << truncated << " truncated; word_ids of " << words_checked << " sentences), "
            << failures << " mismatches\n";
}

INSTANTIATE_TEST_SUITE_P(Trained, SubwordHfParity,
                         testing::Values(ParityCase{"roberta", "slow"}, ParityCase{"roberta", "fast"},
                                         ParityCase{"xlm-roberta", "slow"}, ParityCase{"xlm-roberta", "fast"},
                                         ParityCase{"albert", "slow"}, ParityCase{"albert", "fast"},
                                         ParityCase{"deberta-v2", "slow"}, ParityCase{"deberta-v2", "fast"},
                                         ParityCase{"modernbert", "fast"},
                                         ParityCase{"wordlevel", "fast"}),
                         case_name);

namespace {

// A piece that starts with the word mark (`mark`: "Ġ" or "▁") starts a word (so do others: a BPE
// chunk without a space, "'t" or "!!").
void expect_word_marks(const SentenceTokens& t, const std::string& mark, const std::string& what) {
  ASSERT_EQ(t.word_index.size(), t.pieces.size()) << what;
  for (std::size_t i = 1; i < t.pieces.size(); ++i) {
    if (t.pieces[i].rfind(mark, 0) == 0)
      EXPECT_NE(t.word_index[i], t.word_index[i - 1]) << what << ": piece " << i << " " << join(t.pieces);
    else if (mark == "\xE2\x96\x81" && !t.special[i] && !t.special[i - 1])
      EXPECT_EQ(t.word_index[i], t.word_index[i - 1]) << what << ": piece " << i << " " << join(t.pieces);
  }
  for (std::size_t i = 0; i < t.word_index.size(); ++i)
    ASSERT_LT(static_cast<std::size_t>(t.word_index[i]), t.words.size()) << what;
}

Tokenizer load(const std::string& name, TokenizerFile file) {
  return load_tokenizer(trained(name), config_for(name), file);
}

#define REQUIRE_TRAINED(name)                                                                                \
  if (!std::filesystem::exists(trained(name) / "tokenizer.json"))                                            \
  GTEST_SKIP() << "trained tokenizer " << trained(name) << " missing (tests/reference/train_tokenizers.py, run by " \
                  "scripts/setup.sh)"

}  // namespace

TEST(SubwordTokenizer, ByteLevelBpeWordsAreTheSplitPatternChunks) {
  REQUIRE_TRAINED("roberta");
  for (auto file : {TokenizerFile::Slow, TokenizerFile::TokenizerJson}) {
    const auto tok = load("roberta", file);
    const auto t = tok.tokenize("The strawberries weren't sold  today!!");
    EXPECT_EQ(t.words, (std::vector<std::string>{"The", "strawberries", "weren", "'t", "sold", " ", "today", "!!"}))
        << tok.source() << ": " << join(t.pieces);
    expect_word_marks(t, "\xC4\xA0", tok.source());
    const auto e = tok.encode_pair("a cat", "<mask> sat");
    EXPECT_EQ(e.tokens.front(), "<s>");
    EXPECT_EQ(join(e.tokens).rfind("<s> a Ġcat </s> </s> <mask> Ġs", 0), 0u) << tok.source() << ": " << join(e.tokens);
    EXPECT_EQ(e.tokens.back(), "</s>");
    EXPECT_EQ(e.words_b, (std::vector<std::string>{"<mask>", "sat"}));
  }
}

TEST(SubwordTokenizer, UnigramWordsStartAtTheSpaceMark) {
  REQUIRE_TRAINED("albert");
  REQUIRE_TRAINED("xlm-roberta");
  for (const char* name : {"albert", "xlm-roberta"}) {
    for (auto file : {TokenizerFile::Slow, TokenizerFile::TokenizerJson}) {
      const auto tok = load(name, file);
      const auto t = tok.tokenize("The strawberries sat, quietly.");
      expect_word_marks(t, "\xE2\x96\x81", tok.source());
      const std::string the = std::string(name) == "albert" ? "the" : "The";
      EXPECT_EQ(t.words, (std::vector<std::string>{the, "strawberries", "sat,", "quietly."}))
          << tok.source() << ": " << join(t.pieces);
    }
  }
}

TEST(SubwordTokenizer, AlbertSlowAndFastDifferWhereHuggingFaceDoes) {
  REQUIRE_TRAINED("albert");
  // A special token written in the text: the slow tokenizer strips the space before it, the fast keeps
  // a lone "▁" (Metaspace over "a ").
  const auto slow = load("albert", TokenizerFile::Slow).tokenize("a [CLS] b");
  const auto fast = load("albert", TokenizerFile::TokenizerJson).tokenize("a [CLS] b");
  EXPECT_EQ(join(slow.pieces), "▁a [CLS] ▁b");
  EXPECT_EQ(join(fast.pieces), "▁a ▁ [CLS] ▁b");
  EXPECT_EQ(slow.special, (std::vector<uint8_t>{0, 1, 0}));
  // The slow "9," rule: a digit piece ending in a comma is re-encoded without it.
  const auto digits = load("albert", TokenizerFile::Slow).tokenize("9,9");
  EXPECT_EQ(digits.pieces.back(), "9");
  const auto e = load("albert", TokenizerFile::Slow).encode_pair("a", "b");
  EXPECT_EQ(join(e.tokens), "[CLS] ▁a [SEP] ▁b [SEP]");
  EXPECT_EQ(e.type_ids, (std::vector<uint8_t>{0, 0, 0, 1, 1}));
}

TEST(SubwordTokenizer, XlmRobertaSlowUsesFairseqIds) {
  REQUIRE_TRAINED("xlm-roberta");
  const auto tok = load("xlm-roberta", TokenizerFile::Slow);
  EXPECT_EQ(tok.vocab().find("<s>"), 0);
  EXPECT_EQ(tok.vocab().find("<pad>"), 1);
  EXPECT_EQ(tok.vocab().find("</s>"), 2);
  EXPECT_EQ(tok.vocab().find("<unk>"), 3);
  EXPECT_EQ(tok.vocab().find("<mask>"), 3001);
  EXPECT_EQ(tok.pad_id(), 1);
  const auto t = tok.tokenize("x <mask>");
  EXPECT_EQ(t.ids.back(), 3001);
  EXPECT_EQ(t.pieces.back(), "<mask>");
  const auto u = tok.tokenize("\xE2\x98\x83");  // a character the vocabulary lacks
  EXPECT_NE(std::find(u.ids.begin(), u.ids.end(), 3), u.ids.end()) << join(u.pieces);
}

TEST(SubwordTokenizer, ModelDirectoryPicksTheSlowFilesThenTokenizerJson) {
  REQUIRE_TRAINED("roberta");
  REQUIRE_TRAINED("albert");
  EXPECT_EQ(load("roberta", TokenizerFile::Auto).source(),
            "vocab.json + merges.txt (byte-level BPE, RobertaTokenizer, RoBERTa template)");
  EXPECT_EQ(load("albert", TokenizerFile::Auto).source(), "spiece.model (Unigram, SentencePiece, AlbertTokenizer, BERT template)");
  EXPECT_EQ(load("xlm-roberta", TokenizerFile::Auto).source(),
            "sentencepiece.bpe.model (Unigram, SentencePiece, XLMRobertaTokenizer, RoBERTa template)");
  const auto fast_only = copy_of("albert", {"tokenizer.json", "tokenizer_config.json"}, "albert_fast_only");
  const auto tok = load_tokenizer(fast_only, config_for("albert"));
  EXPECT_EQ(tok.source(), "tokenizer.json (Unigram, TemplateProcessing)");
  EXPECT_EQ(tok.kind(), SubwordKind::Unigram);
  EXPECT_THROW(load_tokenizer(fast_only, config_for("albert"), TokenizerFile::Slow), ModelError);
}

// One load reads tokenizer_config.json (and special_tokens_map.json) once, whichever file it tokenizes.
TEST(SubwordTokenizer, TokenizerConfigIsReadOncePerLoad) {
  REQUIRE_TRAINED("roberta");
  REQUIRE_TRAINED("albert");
  REQUIRE_TRAINED("xlm-roberta");
  for (const char* name : {"roberta", "albert", "xlm-roberta"}) {
    for (auto file : {TokenizerFile::Slow, TokenizerFile::TokenizerJson}) {
      const auto config = trained(name) / "tokenizer_config.json", map = trained(name) / "special_tokens_map.json";
      ASSERT_TRUE(std::filesystem::exists(config)) << config;
      const std::size_t before = json_file_reads(config), map_before = json_file_reads(map);
      load(name, file);
      EXPECT_EQ(json_file_reads(config) - before, 1u) << name << (file == TokenizerFile::Slow ? " slow" : " fast");
      EXPECT_LE(json_file_reads(map) - map_before, 1u) << name;
    }
  }
  // WordPiece: vocab.txt and tokenizer.json of the real default model, when it is there.
  const auto minilm = test::real_model_dir();
  if (!std::filesystem::exists(minilm / "tokenizer_config.json")) return;
  auto bert = config_for("bert");
  bert.vocab_size = 30522;
  for (auto file : {TokenizerFile::VocabTxt, TokenizerFile::TokenizerJson}) {
    const std::size_t before = json_file_reads(minilm / "tokenizer_config.json");
    load_tokenizer(minilm, bert, file);
    EXPECT_EQ(json_file_reads(minilm / "tokenizer_config.json") - before, 1u) << minilm;
  }
}

TEST(SubwordTokenizer, MissingAndBrokenFilesAreNamed) {
  REQUIRE_TRAINED("roberta");
  auto message = [](const std::filesystem::path& dir, const std::string& type, TokenizerFile file) -> std::string {
    try {
      load_tokenizer(dir, config_for(type), file);
    } catch (const ModelError& e) {
      return e.what();
    }
    return "";
  };
  const auto none = copy_of("roberta", {}, "none");
  const std::string all = message(none, "roberta", TokenizerFile::Auto);
  for (const char* f : {"vocab.txt", "vocab.json", "merges.txt", "sentencepiece.bpe.model", "spiece.model", "tokenizer.json"})
    EXPECT_NE(all.find(f), std::string::npos) << f << " not named in: " << all;
  const auto vocab_only = copy_of("roberta", {"vocab.json"}, "vocab_only");
  EXPECT_NE(message(vocab_only, "roberta", TokenizerFile::VocabMerges).find("merges.txt"), std::string::npos);
  EXPECT_NE(message(none, "albert", TokenizerFile::SentencePiece).find("spiece.model"), std::string::npos);
  // A SentencePiece model of a family whose slow tokenizer attnscan does not reproduce.
  const auto spm_only = copy_of("albert", {"spiece.model"}, "spm_only");
  EXPECT_NE(message(spm_only, "bert", TokenizerFile::Auto).find("model_type 'bert' is not supported yet"), std::string::npos);
  // A file that is not a SentencePiece model.
  const auto broken = test::scratch_dir("subword_broken_spm");
  std::ofstream(broken / "spiece.model") << "not a model";
  const std::string m = message(broken, "albert", TokenizerFile::Auto);
  EXPECT_NE(m.find("spiece.model"), std::string::npos) << m;
  EXPECT_NE(m.find("not a SentencePiece model"), std::string::npos) << m;
  // tokenizer.json features of the trained files, changed to what is not implemented.
  const auto j = json::parse(std::ifstream(trained("xlm-roberta") / "tokenizer.json"));
  auto edited = [&](const std::string& tag, const std::function<void(json&)>& edit) {
    auto dir = test::scratch_dir("subword_edit_" + tag);
    auto k = j;
    edit(k);
    std::ofstream(dir / "tokenizer.json") << k.dump();
    return message(dir, "xlm-roberta", TokenizerFile::Auto);
  };
  EXPECT_NE(edited("regex", [](json& k) { k["normalizer"]["normalizers"][2]["pattern"]["Regex"] = "\\s{2,}"; })
                .find("regex pattern '\\s{2,}' is not supported yet"),
            std::string::npos);
  EXPECT_NE(edited("byte_fallback", [](json& k) { k["model"]["byte_fallback"] = true; })
                .find("model Unigram: byte_fallback is not supported yet"),
            std::string::npos);
  EXPECT_NE(edited("split", [](json& k) { k["pre_tokenizer"] = {{"type", "Split"}}; })
                .find("pre_tokenizer Split: field 'pattern' must be {\"Regex\": ...} or {\"String\": ...}"),
            std::string::npos);
  const std::string vocab_size = [&] {
    auto dir = test::scratch_dir("subword_small_vocab");
    std::ofstream(dir / "tokenizer.json") << j.dump();
    auto small = config_for("xlm-roberta");
    small.vocab_size = 100;
    try {
      load_tokenizer(dir, small);
    } catch (const ModelError& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  EXPECT_NE(vocab_size.find("config.json says vocab_size 100"), std::string::npos) << vocab_size;
}
