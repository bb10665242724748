// Decoder models' tokenizers from tokenizer.json (GPT-2, Llama 3, Qwen2, Gemma, Llama 2, Pythia, SmolLM2): the
// Split pre-tokenizer's behaviours and regexes, Digits, Prepend, byte_fallback, the ByteLevel and Sequence
// post-processors, the special tokens by role, and parity of every id and character offset with HF
// `tokenizers` (tests/reference/make_decoder_tokenizer_fixtures.py over train_tokenizers.py's directories).
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "common/error.hpp"
#include "support/jsonl.hpp"
#include "support/test_paths.hpp"
#include "tokenizer/fast_text.hpp"
#include "tokenizer/pre_tokenizers/split_regex.hpp"
#include "tokenizer/unicode_text.hpp"
#include "tokenizer/tokenizer.hpp"

using namespace attnscan;
using detail::NormalizedText;
using detail::PreTokenizerStep;
using nlohmann::json;

namespace {

using Behavior = PreTokenizerStep::SplitBehavior;

// The pieces and their character spans that one Split step makes of `text`.
std::vector<std::pair<std::string, CharSpan>> split(const std::string& pattern, Behavior behavior, bool invert,
                                                    const std::u32string& text, bool literal = false) {
  PreTokenizerStep s{PreTokenizerStep::Kind::Split};
  s.pattern = literal ? detail::SplitRegex::literal(pattern) : detail::SplitRegex::regex(pattern);
  s.behavior = behavior;
  s.invert = invert;
  std::vector<std::pair<std::string, CharSpan>> out;
  for (const auto& p : detail::pre_tokenize({s}, NormalizedText(text)))
    out.emplace_back(unicode::encode(p.text()), p.original(0, p.size()));
  return out;
}

std::vector<std::string> texts(const std::vector<std::pair<std::string, CharSpan>>& pieces) {
  std::vector<std::string> out;
  for (const auto& p : pieces) out.push_back(p.first);
  return out;
}

using Strings = std::vector<std::string>;

std::filesystem::path trained(const std::string& name) { return test::fixture_dir() / "trained_tokenizers" / name; }

TokenizerFacts decoder_facts() {
  TokenizerFacts f;
  f.model_type = "decoder";
  f.vocab_size = 1 << 20;
  f.max_tokens = 1 << 20;
  return f;
}

}  // namespace

// The crate's five behaviours on one hand-made pattern, inverted and not (expected pieces worked out from
// tokenizers' NormalizedString::split).
TEST(SplitPreTokenizer, BehavioursCutAsTheTokenizersCrate) {
  const std::u32string text = U"ab--cd-e";
  EXPECT_EQ(texts(split("-+", Behavior::Removed, false, text)), (Strings{"ab", "cd", "e"}));
  EXPECT_EQ(texts(split("-+", Behavior::Isolated, false, text)), (Strings{"ab", "--", "cd", "-", "e"}));
  EXPECT_EQ(texts(split("-+", Behavior::MergedWithPrevious, false, text)), (Strings{"ab--", "cd-", "e"}));
  EXPECT_EQ(texts(split("-+", Behavior::MergedWithNext, false, text)), (Strings{"ab", "--cd", "-e"}));
  EXPECT_EQ(texts(split("-", Behavior::Contiguous, false, text)), (Strings{"ab", "--", "cd", "-", "e"}));
  // invert: the text between matches is what the behaviour applies to
  EXPECT_EQ(texts(split("-+", Behavior::Removed, true, text)), (Strings{"--", "-"}));
  EXPECT_EQ(texts(split("-+", Behavior::MergedWithPrevious, true, text)), (Strings{"ab", "--cd", "-e"}));
  EXPECT_EQ(texts(split("-+", Behavior::MergedWithNext, true, text)), (Strings{"ab--", "cd-", "e"}));
  // a leading match has nothing before it to merge with; empty text gives no piece
  EXPECT_EQ(texts(split("-", Behavior::MergedWithPrevious, false, U"-a-")), (Strings{"-", "a-"}));
  EXPECT_TRUE(split("-", Behavior::Isolated, false, U"").empty());
  // a literal pattern (tokenizers' String) is not a regex
  EXPECT_EQ(texts(split(".", Behavior::Isolated, false, U"a.b", true)), (Strings{"a", ".", "b"}));
  // spans are characters of the text, not bytes
  const auto cjk = split("\\p{L}+", Behavior::Isolated, false, U"日本 語");
  ASSERT_EQ(cjk.size(), 3u);
  EXPECT_EQ(cjk[2].second, (CharSpan{3, 4}));
}

// Empty matches as the onig crate's find_iter yields them: kept, but not where the previous match ended.
TEST(SplitPreTokenizer, EmptyMatchesFollowOniguruma) {
  const auto re = detail::SplitRegex::regex("x*");
  const std::vector<std::pair<std::size_t, std::size_t>> expected = {{0, 0}, {1, 3}, {4, 4}};
  EXPECT_EQ(re->find(U"axxb"), expected);
  EXPECT_EQ(texts(split("x*", Behavior::Isolated, false, U"axxb")), (Strings{"a", "xx", "b"}));
}

// The Llama-3 and Qwen2 patterns on the cases that tell them apart from GPT-2's (HF's pieces, written out
// from `tokenizers` 0.19), and \s as Oniguruma's Unicode White_Space (PCRE2's own \s adds U+180E).
TEST(SplitPreTokenizer, DecoderRegexesGiveHuggingFacesPieces) {
  const std::string llama3 =
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
      "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  EXPECT_EQ(texts(split(llama3, Behavior::Isolated, false, U"HE'S 12345 x\r\n\n  y")),
            (Strings{"HE", "'S", " ", "123", "45", " x", "\r\n\n", " ", " y"}));
  EXPECT_EQ(texts(split(llama3, Behavior::Isolated, false, U"a\u00a0b\u3000\u3000c")),
            (Strings{"a", "\u00a0b", "\u3000", "\u3000c"}));
  // U+180E is no space for Oniguruma: a punctuation-like run of its own, not whitespace before "b"
  EXPECT_EQ(texts(split("\\s+|\\S+", Behavior::Isolated, false, U"a\u180e b")), (Strings{"a\u180e", " ", "b"}));
  EXPECT_EQ(texts(split("[\\s]+", Behavior::Removed, false, U"a\u0085b\u180ec")), (Strings{"a", "b\u180ec"}));
  EXPECT_EQ(detail::SplitRegex::with_oniguruma_spaces("[^\\s\\p{L}]\\S"),
            "[^\\t-\\r\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\p{L}]"
            "[^\\t-\\r\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}]");
}

// An invalid regex in tokenizer.json is a ModelError naming the file and the field.
TEST(SplitPreTokenizer, InvalidRegexIsNamedWithFileAndField) {
  const auto gpt2 = trained("gpt2") / "tokenizer.json";
  if (!std::filesystem::exists(gpt2)) GTEST_SKIP() << gpt2 << " missing: made by tests/reference/train_tokenizers.py";
  auto j = json::parse(std::ifstream(gpt2));
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Split"}, {"pattern", {{"Regex", "[\\p{L}+"}}}, {"behavior", "Isolated"}},
                          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  const auto dir = test::scratch_dir("decoder_bad_regex");
  std::ofstream(dir / "tokenizer.json") << j.dump();
  try {
    Tokenizer::from_model_dir(dir, decoder_facts());
    FAIL() << "an invalid regex loaded";
  } catch (const ModelError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find((dir / "tokenizer.json").string()), std::string::npos) << m;
    EXPECT_NE(m.find("pre_tokenizer Split: field 'pattern.Regex' '[\\p{L}+' is not a valid regex: missing terminating ]"),
              std::string::npos)
        << m;
  }
}

// Digits, Prepend and byte_fallback on hand-written text through the trained tokenizers.
TEST(DecoderTokenizers, DigitsPrependAndByteFallback) {
  for (const char* name : {"smollm2", "llama2", "gemma"})
    if (!std::filesystem::exists(trained(name) / "tokenizer.json"))
      GTEST_SKIP() << trained(name) << " missing: made by tests/reference/train_tokenizers.py";
  const auto smollm2 = Tokenizer::from_model_dir(trained("smollm2"), decoder_facts());
  const auto digits = smollm2.tokenize("x 2024");
  EXPECT_EQ(digits.pieces, (Strings{"x", "Ġ", "2", "0", "2", "4"}));  // Digits isolates each digit before ByteLevel
  const auto llama2 = Tokenizer::from_model_dir(trained("llama2"), decoder_facts());
  const auto prepended = llama2.tokenize("the");
  ASSERT_FALSE(prepended.pieces.empty());
  EXPECT_EQ(prepended.pieces[0].rfind("\u2581", 0), 0u) << prepended.pieces[0];  // "▁" prepended
  EXPECT_EQ(prepended.offsets[0], (CharSpan{0, 3}));
  EXPECT_TRUE(llama2.tokenize("").ids.empty());  // Prepend leaves empty text empty
  const auto gemma = Tokenizer::from_model_dir(trained("gemma"), decoder_facts());
  EXPECT_EQ(gemma.kind(), SubwordKind::Bpe);
  const auto bytes = gemma.tokenize("a\U0001F642");  // 🙂 is outside the trained vocabulary: its four bytes
  ASSERT_GE(bytes.pieces.size(), 4u);
  const Strings last4(bytes.pieces.end() - 4, bytes.pieces.end());
  EXPECT_EQ(last4, (Strings{"<0xF0>", "<0x9F>", "<0x99>", "<0x82>"}));
  for (std::size_t i = bytes.pieces.size() - 4; i < bytes.pieces.size(); ++i)
    EXPECT_EQ(bytes.offsets[i], (CharSpan{1, 2}));  // each byte token covers its whole character
}

// Specials by role: decoders without pad, cls or sep load; the template adds a BOS or nothing.
TEST(DecoderTokenizers, SpecialTokensByRole) {
  for (const char* name : {"gpt2", "llama3", "qwen2", "gemma"})
    if (!std::filesystem::exists(trained(name) / "tokenizer.json"))
      GTEST_SKIP() << trained(name) << " missing: made by tests/reference/train_tokenizers.py";
  const auto gpt2 = Tokenizer::from_model_dir(trained("gpt2"), decoder_facts());
  const int32_t eot = gpt2.vocab().find("<|endoftext|>");
  EXPECT_EQ(gpt2.specials().begin, eot);  // bos_token, not added by the template
  EXPECT_EQ(gpt2.specials().end, eot);
  EXPECT_FALSE(gpt2.specials().separator);
  EXPECT_FALSE(gpt2.specials().pad);
  EXPECT_EQ(gpt2.pad_id(), eot);  // no pad token: batches are padded with end (masked anyway)
  EXPECT_EQ(gpt2.encode_single("hi").ids, gpt2.tokenize("hi").ids);  // no post-processor tokens

  const auto llama3 = Tokenizer::from_model_dir(trained("llama3"), decoder_facts());
  const int32_t bot = llama3.vocab().find("<|begin_of_text|>");
  EXPECT_EQ(llama3.specials().begin, bot);
  EXPECT_EQ(llama3.specials().end, llama3.vocab().find("<|end_of_text|>"));
  EXPECT_FALSE(llama3.specials().separator);  // the pair template repeats <|begin_of_text|>: no separator
  EXPECT_FALSE(llama3.specials().pad);
  const Encoding e = llama3.encode_single("hi there");
  ASSERT_GE(e.size(), 2u);
  EXPECT_EQ(e.ids[0], bot);
  EXPECT_EQ(e.special[0], 1);
  EXPECT_EQ(e.offsets[0], CharSpan{});

  const auto qwen2 = Tokenizer::from_model_dir(trained("qwen2"), decoder_facts());
  EXPECT_FALSE(qwen2.specials().begin);  // bos_token null and no template
  EXPECT_EQ(qwen2.specials().end, qwen2.vocab().find("<|endoftext|>"));
  EXPECT_EQ(qwen2.specials().pad, qwen2.vocab().find("<|endoftext|>"));

  const auto gemma = Tokenizer::from_model_dir(trained("gemma"), decoder_facts());
  EXPECT_EQ(gemma.specials().begin, gemma.vocab().find("<bos>"));
  EXPECT_EQ(gemma.specials().end, gemma.vocab().find("<eos>"));
  EXPECT_EQ(gemma.specials().pad, gemma.vocab().find("<pad>"));
  EXPECT_EQ(gemma.pad_id(), *gemma.specials().pad);
}

// Every id and character offset of HF `tokenizers` over tokenizer.json, single texts with the
// post-processor's tokens (HF's (0, 0) for them; attnscan's -1/-1).
TEST(DecoderTokenizers, IdsAndOffsetsEqualHuggingFace) {
  const auto file = test::fixture_dir() / "decoder_tokenizers.jsonl";
  if (!std::filesystem::exists(file))
    GTEST_SKIP() << "reference fixture " << file << " missing: it is generated by "
                 << "tests/reference/make_decoder_tokenizer_fixtures.py during the README test command (scripts/setup.sh)";
  std::map<std::string, std::unique_ptr<Tokenizer>> tokenizers;
  std::map<std::string, std::pair<int, int>> per_model;  // rows compared, rows differing
  int shown = 0;
  for (const auto& row : test::read_jsonl(file)) {
    if (row.contains("a")) continue;  // a joined pair: JoinedPairs.IdsAndSentencesFollowHuggingFaceOffsetsOfTheJoinedText
    const std::string model = row["model"], dir = row["dir"], text = row["text"];
    auto& tok = tokenizers[model];
    if (!tok) tok = std::make_unique<Tokenizer>(Tokenizer::from_model_dir(dir, decoder_facts()));
    const Encoding e = tok->encode_single(text, 1 << 20);
    std::vector<std::pair<int64_t, int64_t>> offsets, want;
    for (std::size_t i = 0; i < e.size(); ++i)
      offsets.emplace_back(e.word_index[i] < 0 ? 0 : e.offsets[i].start, e.word_index[i] < 0 ? 0 : e.offsets[i].end);
    for (const auto& o : row["offsets"]) want.emplace_back(o[0].get<int64_t>(), o[1].get<int64_t>());
    const bool same = e.ids == row["ids"].get<std::vector<int32_t>>() && offsets == want;
    auto& [compared, differing] = per_model[model];
    ++compared;
    if (!same) {
      ++differing;
      if (shown++ < 8) ADD_FAILURE() << model << " " << row["source"] << ": " << json(text).dump() << "\n ids "
                                     << json(e.ids).dump() << "\n HF  " << row["ids"].dump() << "\n offsets "
                                     << json(offsets).dump() << "\n HF      " << row["offsets"].dump();
    }
  }
  for (const auto& [model, counts] : per_model) {
    std::cout << "  " << model << ": " << counts.first << " texts, " << counts.second << " differing\n";
    EXPECT_EQ(counts.second, 0) << model;
  }
  EXPECT_GE(per_model.size(), 7u) << "tokenizers missing from " << file;
}
