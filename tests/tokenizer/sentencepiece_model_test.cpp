// attnscan's own reader of SentencePiece `*.model` files (tokenizer/files/sentencepiece_model.hpp): a model
// built here byte by byte (normalisation, user-defined and unused pieces, unknowns merged), the
// features refused with the field named, and truncated, garbled and random files refused without a
// crash. Parity with the Python library is the slow rows of subword_tokenizer_test.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "common/error.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/files/sentencepiece_model.hpp"
#include "support/test_paths.hpp"
#include "model/model_tokenizer.hpp"

using namespace attnscan;
using detail::SentencePieceModel;
using detail::parse_sentencepiece_proto;

namespace {

// The protobuf wire format, enough to write a ModelProto. (The expectations below were checked
// against the Python sentencepiece 0.2.0 loading the fuzz seed tests/fuzz/corpus/sentencepiece/, these
// pieces plus "9" and ",".)
std::string varint(uint64_t n) {
  std::string out;
  do {
    unsigned char b = n & 0x7F;
    n >>= 7;
    out.push_back(static_cast<char>(n ? b | 0x80 : b));
  } while (n);
  return out;
}
std::string key(int field, int wire) { return varint(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire)); }
std::string field_bytes(int field, const std::string& b) { return key(field, 2) + varint(b.size()) + b; }
std::string field_varint(int field, uint64_t v) { return key(field, 0) + varint(v); }
std::string field_float(int field, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  std::string out = key(field, 5);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
  return out;
}

struct Spec {
  std::vector<std::tuple<std::string, float, int>> pieces = {
      {"<unk>", 0, 2}, {"<s>", 0, 3}, {"</s>", 0, 3}, {"\xE2\x96\x81", -2, 1}, {"a", -3, 1}, {"b", -3, 1},
      {"\xE2\x96\x81" "ab", -1, 1}, {"\xE2\x96\x81" "a", -2, 1}, {"<x>", 0, 4}, {"c", -0.5f, 5}};
  std::string trainer = field_varint(3, 1);
  std::string normalizer = field_bytes(1, "identity");
};

std::string build(const Spec& s) {
  std::string m;
  for (const auto& [p, score, type] : s.pieces)
    m += field_bytes(1, field_bytes(1, p) + field_float(2, score) + field_varint(3, static_cast<uint64_t>(type)));
  m += field_bytes(2, s.trainer);
  m += field_bytes(3, s.normalizer);
  m += field_bytes(4, field_bytes(1, field_bytes(1, "ignored") + field_bytes(2, "ignored")));  // self_test_data
  return m;
}

SentencePieceModel model(const Spec& s) { return SentencePieceModel(parse_sentencepiece_proto(build(s), "t.model"), "t.model"); }

std::string pieces(const SentencePieceModel& m, std::string_view text) {
  std::string out;
  for (const auto& [p, id] : m.encode(text)) out += (out.empty() ? "" : " ") + p + "/" + std::to_string(id);
  return out;
}

std::string refusal(const std::string& bytes) {
  try {
    SentencePieceModel(parse_sentencepiece_proto(bytes, "t.model"), "t.model");
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SentencePieceModel, EncodesAsSentencePieceDoes) {
  const auto m = model(Spec{});
  EXPECT_EQ(m.size(), 10);
  EXPECT_EQ(m.unk_id(), 0);
  // remove_extra_whitespaces, add_dummy_prefix, escape_whitespaces (the defaults).
  EXPECT_EQ(m.normalize("  ab   a  "), "\xE2\x96\x81" "ab\xE2\x96\x81" "a");
  EXPECT_EQ(m.normalize("   "), "");
  EXPECT_EQ(pieces(m, "ab  a"), "\xE2\x96\x81" "ab/6 \xE2\x96\x81" "a/7");
  // A user-defined piece is kept whole and always chosen; an unused piece is an unknown character.
  EXPECT_EQ(pieces(m, "a<x>b"), "\xE2\x96\x81" "a/7 <x>/8 b/5");
  EXPECT_EQ(pieces(m, "abc"), "\xE2\x96\x81" "ab/6 c/0");
  // Consecutive unknowns are one piece; a malformed byte is U+FFFD.
  EXPECT_EQ(pieces(m, "\xE2\x98\x83\xE2\x98\x83" "a"), "\xE2\x96\x81/3 \xE2\x98\x83\xE2\x98\x83/0 a/4");
  EXPECT_EQ(m.normalize("\xFF"), "\xE2\x96\x81\xEF\xBF\xBD");
  EXPECT_EQ(m.piece_to_id("<s>"), 1);
  EXPECT_EQ(m.piece_to_id("\xE2\x96\x81" "ab"), 6);
  EXPECT_EQ(m.piece_to_id("nope"), 0);
  // The normalizer's flags.
  Spec raw;
  raw.normalizer = field_varint(3, 0) + field_varint(4, 0) + field_varint(5, 0);
  EXPECT_EQ(model(raw).normalize(" a  b "), " a  b ");
}

TEST(SentencePieceModel, UnsupportedFeaturesAreRefusedByField) {
  auto with = [](const std::function<void(Spec&)>& edit) {
    Spec s;
    edit(s);
    return refusal(build(s));
  };
  EXPECT_NE(with([](Spec& s) { s.trainer = field_varint(3, 2); }).find("trainer_spec.model_type BPE is not supported"),
            std::string::npos);
  EXPECT_NE(with([](Spec& s) { s.trainer += field_varint(35, 1); }).find("trainer_spec.byte_fallback"), std::string::npos);
  EXPECT_NE(with([](Spec& s) { s.trainer += field_varint(24, 1); }).find("treat_whitespace_as_suffix"), std::string::npos);
  EXPECT_NE(with([](Spec& s) { s.normalizer += field_bytes(6, "41\t61\n"); }).find("normalization_rule_tsv"),
            std::string::npos);
  EXPECT_NE(with([](Spec& s) { s.normalizer += field_bytes(2, std::string("\x08\x00\x00\x00", 4)); })
                .find("precompiled_charsmap"),
            std::string::npos);
  EXPECT_NE(with([](Spec& s) { s.pieces.erase(s.pieces.begin()); }).find("no piece of type UNKNOWN"), std::string::npos);
  EXPECT_NE(with([](Spec& s) { s.pieces.emplace_back("a", -1, 1); }).find("'a' is already defined"), std::string::npos);
  EXPECT_NE(with([](Spec& s) { s.pieces.emplace_back("", -1, 1); }).find("pieces[10] is empty"), std::string::npos);
  EXPECT_NE(with([](Spec& s) { s.pieces.emplace_back("<0x41>", 0, 6); }).find("BYTE piece"), std::string::npos);
  EXPECT_NE(with([](Spec& s) { s.trainer += key(7, 3); }).find("trainer_spec: wire type 3"), std::string::npos);
  EXPECT_NE(with([](Spec& s) { s.trainer = field_bytes(3, "x"); }).find("field model_type has wire type 2"),
            std::string::npos);
  EXPECT_NE(refusal("").find("no pieces"), std::string::npos);
}

TEST(SentencePieceModel, TruncatedGarbledAndRandomFilesAreRefusedWithoutACrash) {
  std::vector<std::string> files = {build(Spec{})};
  const auto real = test::fixture_dir() / "trained_tokenizers" / "albert" / "spiece.model";
  if (std::filesystem::exists(real)) {
    std::ifstream in(real, std::ios::binary);
    files.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::mt19937 rng(15);
  int refused = 0, loaded = 0;
  auto attempt = [&](const std::string& bytes) {
    try {
      const SentencePieceModel m(parse_sentencepiece_proto(bytes, "t.model"), "t.model");
      for (const auto& [p, id] : m.encode("Hello  world, caf\xC3\xA9 \xE2\x98\x83 9,000"))
        ASSERT_TRUE(!p.empty() && id >= 0 && id < m.size());
      ++loaded;
    } catch (const ModelError& e) {
      ASSERT_NE(std::string(e.what()).find("t.model"), std::string::npos) << e.what();
      ++refused;
    }
  };
  for (const auto& f : files) {
    for (int k = 0; k < 300; ++k) attempt(f.substr(0, rng() % f.size()));  // truncated
    for (int k = 0; k < 300; ++k) {                                       // a few bytes changed
      std::string g = f;
      for (int j = 0; j < 1 + k % 8; ++j) g[rng() % g.size()] = static_cast<char>(rng());
      attempt(g);
    }
  }
  for (int k = 0; k < 500; ++k) {  // random bytes
    std::string r(rng() % 512, '\0');
    for (auto& c : r) c = static_cast<char>(rng());
    attempt(r);
  }
  EXPECT_GT(refused, 500);
  std::cout << "garbled models: " << refused << " refused, " << loaded << " loaded\n";
}

TEST(SentencePieceModel, TokenizerReadsALoneModelFile) {
  // A model directory with only the *.model: the slow tokenizer, in every program (no libsentencepiece).
  const auto dir = test::scratch_dir("spm_lone_model");
  std::ofstream(dir / "sentencepiece.bpe.model", std::ios::binary) << build(Spec{});
  ModelConfig c;
  c.model_type = "xlm-roberta";
  c.vocab_size = 12;
  c.max_position_embeddings = 514;
  const auto tok = load_tokenizer(dir, c);
  EXPECT_EQ(tok.source(), "sentencepiece.bpe.model (Unigram, SentencePiece, XLMRobertaTokenizer, RoBERTa template)");
  const auto e = tok.encode_single("ab a<mask>", 0);
  std::vector<int32_t> want = {0, 7, 8, 11, 2};  // <s> ▁ab ▁a <mask> </s>: fairseq ids (+1), <mask> last
  EXPECT_EQ(e.ids, want);
}
