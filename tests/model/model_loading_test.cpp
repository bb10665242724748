// Loading Hugging Face BERT directories: accepted variants, and one clear error per kind of damage
// that names the file and the tensor.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "model/model_weights.hpp"
#include "model/safetensors.hpp"
#include "support/model_builder.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

// Loads DIR and returns the error message (fails the test if loading succeeds).
std::string load_error(const fs::path& dir) {
  try {
    load_model(dir);
  } catch (const ModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "loading " << dir << " succeeded";
  return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

#define EXPECT_MENTIONS(msg, part) EXPECT_TRUE(contains(msg, part)) << "message: " << msg << "\nlacks: " << part

std::vector<test::Blob>::iterator find_blob(std::vector<test::Blob>& blobs, const std::string& name) {
  for (auto it = blobs.begin(); it != blobs.end(); ++it)
    if (it->name == name) return it;
  throw std::runtime_error("no blob " + name);
}

}  // namespace

TEST(ModelLoading, LoadsPlainCheckpoint) {
  auto dir = test::build_model(test::scratch_dir("load_plain"), test::tiny_shape());
  auto m = load_model(dir);
  EXPECT_EQ(m.config.num_layers, 2);
  EXPECT_EQ(m.config.head_dim(), 4);
  EXPECT_TRUE(m.weights->ignored().empty());
  EXPECT_EQ(m.weights->get("encoder.layer.1.output.dense.weight").shape, (std::vector<int64_t>{8, 16}));
}

TEST(ModelLoading, AcceptsBertPrefixHalfPrecisionAndIgnoresTaskHeads) {
  for (std::string dtype : {"F16", "BF16"}) {
    test::BuildOptions o;
    o.dtype = dtype;
    o.prefix = "bert.";
    o.task_heads = true;
    auto dir = test::build_model(test::scratch_dir("load_prefix_" + dtype), test::tiny_shape(), o);
    auto m = load_model(dir);
    EXPECT_EQ(m.weights->get("embeddings.word_embeddings.weight").dtype_tag, dtype);
    EXPECT_EQ(m.weights->ignored().size(), 4u);  // bert.pooler.* and cls.*
  }
}

TEST(ModelLoading, AcceptsLayerNormGammaBeta) {
  test::BuildOptions o;
  o.edit = [](std::vector<test::Blob>& blobs) {
    for (auto& b : blobs) {
      auto pos = b.name.find("LayerNorm.weight");
      if (pos != std::string::npos) b.name.replace(pos, 16, "LayerNorm.gamma");
      pos = b.name.find("LayerNorm.bias");
      if (pos != std::string::npos) b.name.replace(pos, 14, "LayerNorm.beta");
    }
  };
  auto dir = test::build_model(test::scratch_dir("load_gamma"), test::tiny_shape(), o);
  EXPECT_EQ(load_model(dir).weights->get("embeddings.LayerNorm.weight").name, "embeddings.LayerNorm.gamma");
}

// The process's resident pages of file mappings (RssFile in /proc/self/status), in KiB.
long rss_file_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("RssFile:", 0) == 0) return std::stol(line.substr(8));
  return -1;
}

TEST(ModelLoading, DroppedPagesLeaveTheFootprintAndReadBackTheSame) {
  const fs::path file = test::scratch_dir("drop_pages") / "big.safetensors";
  test::Blob blob{"w", "F32", {4 << 20}, std::vector<uint8_t>(std::size_t{16} << 20)};  // 16 MiB
  for (std::size_t i = 0; i < blob.bytes.size(); ++i) blob.bytes[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  test::write_safetensors(file, {blob});
  const SafetensorsFile st(file);
  const TensorView& v = st.tensors().at(0);
  auto sum = [&] {
    uint64_t s = 0;
    for (std::size_t i = 0; i < v.nbytes; i += 64) s = s * 31 + std::to_integer<uint64_t>(v.data[i]);
    return s;
  };
  const uint64_t before = sum();
  const long read_kib = rss_file_kib();
  ASSERT_GT(read_kib, 0) << "/proc/self/status has no RssFile";
  st.drop_pages();
  EXPECT_LT(rss_file_kib(), read_kib - 12 * 1024) << "the 16 MiB read are still counted";
  EXPECT_EQ(sum(), before);
  EXPECT_EQ(std::memcmp(v.data, blob.bytes.data(), v.nbytes), 0);
}

TEST(ModelLoadingErrors, MissingTensorIsNamed) {
  test::BuildOptions o;
  o.edit = [](auto& blobs) { blobs.erase(find_blob(blobs, "encoder.layer.1.attention.self.key.weight")); };
  auto dir = test::build_model(test::scratch_dir("err_missing"), test::tiny_shape(), o);
  auto msg = load_error(dir);
  EXPECT_MENTIONS(msg, (dir / "model.safetensors").string());
  EXPECT_MENTIONS(msg, "missing tensor 'encoder.layer.1.attention.self.key.weight' [8, 8]");
}

TEST(ModelLoadingErrors, WrongShapeIsNamed) {
  test::BuildOptions o;
  o.edit = [](auto& blobs) {
    auto it = find_blob(blobs, "encoder.layer.0.intermediate.dense.weight");
    it->shape = {8, 16};  // transposed: same byte count, wrong shape
  };
  auto dir = test::build_model(test::scratch_dir("err_shape"), test::tiny_shape(), o);
  auto msg = load_error(dir);
  EXPECT_MENTIONS(msg, (dir / "model.safetensors").string());
  EXPECT_MENTIONS(msg, "tensor 'encoder.layer.0.intermediate.dense.weight' has shape [8, 16], expected [16, 8]");
}

TEST(ModelLoadingErrors, WrongDtypeIsNamed) {
  test::BuildOptions o;
  o.edit = [](auto& blobs) { find_blob(blobs, "embeddings.LayerNorm.bias")->dtype = "I32"; };
  auto dir = test::build_model(test::scratch_dir("err_dtype"), test::tiny_shape(), o);
  auto msg = load_error(dir);
  EXPECT_MENTIONS(msg, (dir / "model.safetensors").string());
  EXPECT_MENTIONS(msg, "tensor 'embeddings.LayerNorm.bias' has dtype I32, expected F32, F16 or BF16");
}

TEST(ModelLoadingErrors, EveryProblemIsListedAtOnce) {
  test::BuildOptions o;
  o.edit = [](auto& blobs) {
    blobs.erase(find_blob(blobs, "encoder.layer.0.output.dense.bias"));
    find_blob(blobs, "encoder.layer.1.output.dense.bias")->dtype = "I32";
    blobs.push_back({"encoder.layer.7.adapter.weight", "F32", {2}, std::vector<uint8_t>(8)});
  };
  auto dir = test::build_model(test::scratch_dir("err_many"), test::tiny_shape(), o);
  auto msg = load_error(dir);
  EXPECT_MENTIONS(msg, "3 problem(s)");
  EXPECT_MENTIONS(msg, "missing tensor 'encoder.layer.0.output.dense.bias'");
  EXPECT_MENTIONS(msg, "tensor 'encoder.layer.1.output.dense.bias' has dtype I32");
  EXPECT_MENTIONS(msg, "unexpected tensor 'encoder.layer.7.adapter.weight'");
}

TEST(ModelLoadingErrors, TruncatedFileNamesTheTensorCutOff) {
  auto dir = test::build_model(test::scratch_dir("err_truncated"), test::tiny_shape());
  auto file = dir / "model.safetensors";
  fs::resize_file(file, fs::file_size(file) - 100);
  auto msg = load_error(dir);
  EXPECT_MENTIONS(msg, file.string());
  EXPECT_MENTIONS(msg, "file is truncated: tensor 'encoder.layer.1.output.LayerNorm.");
}

TEST(ModelLoadingErrors, CorruptHeaderIsReported) {
  auto dir = test::build_model(test::scratch_dir("err_header"), test::tiny_shape());
  auto file = dir / "model.safetensors";
  {  // overwrite the first bytes of the JSON header
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    f.write("{\"x\":", 5);
  }
  auto msg = load_error(dir);
  EXPECT_MENTIONS(msg, file.string());
  EXPECT_MENTIONS(msg, "corrupt safetensors header");

  {  // a header size larger than the file
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.write("\xff\xff\xff\x00\x00\x00\x00\x00", 8);
  }
  msg = load_error(dir);
  EXPECT_MENTIONS(msg, "corrupt safetensors header: header size 16777215 exceeds the file size");

  std::ofstream(file, std::ios::binary | std::ios::trunc) << "abc";
  EXPECT_MENTIONS(load_error(dir), "shorter than the 8-byte header size");
}

TEST(ModelLoadingErrors, TensorWithInconsistentByteCountIsNamed) {
  test::BuildOptions o;
  o.edit = [](auto& blobs) { find_blob(blobs, "embeddings.LayerNorm.weight")->shape = {9}; };
  auto dir = test::build_model(test::scratch_dir("err_bytes"), test::tiny_shape(), o);
  auto msg = load_error(dir);
  EXPECT_MENTIONS(msg, "tensor 'embeddings.LayerNorm.weight': holds 32 bytes but shape and dtype need 36");
}

TEST(ModelLoadingErrors, UnsupportedArchitectureIsNamed) {
  test::BuildOptions o;
  o.model_type = "t5";
  auto dir = test::build_model(test::scratch_dir("err_arch"), test::tiny_shape(), o);
  auto msg = load_error(dir);
  EXPECT_MENTIONS(msg, (dir / "config.json").string());
  EXPECT_MENTIONS(msg, "unsupported architecture model_type 't5'");
  EXPECT_MENTIONS(msg, "attnscan supports 'bert', 'roberta', 'xlm-roberta', 'distilbert', 'electra', 'albert', 'mpnet', "
                       "'deberta-v2', 'modernbert', 'gpt2', 'llama', 'mistral', 'qwen2', 'qwen3', 'gemma3_text', 'gpt_neox'");
}

TEST(ModelLoadingErrors, ADecoderConfigNamesItsMissingField) {
  test::BuildOptions o;
  o.model_type = "gpt2";  // a BERT-shaped config.json: GPT-2's own size fields are missing
  auto dir = test::build_model(test::scratch_dir("err_gpt2_fields"), test::tiny_shape(), o);
  auto msg = load_error(dir);
  EXPECT_MENTIONS(msg, (dir / "config.json").string() + ": missing field 'n_embd'");
}

namespace {

// A copy of a family fixture's model directory (empty path when the fixture is absent).
fs::path family_model_copy(const std::string& family, const std::string& scratch) {
  const fs::path src = test::fixture_dir() / "families" / family / "model";
  if (!fs::exists(src / "model.safetensors")) return {};
  auto dir = test::scratch_dir(scratch);
  for (const auto& f : fs::directory_iterator(src)) fs::copy(f.path(), dir / f.path().filename());
  return dir;
}

// Renames one tensor in the header (same byte length, so only that name changes).
void rename_tensor(const fs::path& dir, const std::string& from, const std::string& to) {
  ASSERT_EQ(from.size(), to.size());
  std::string bytes;
  {
    std::ifstream in(dir / "model.safetensors", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto at = bytes.find("\"" + from + "\"");
  ASSERT_NE(at, std::string::npos) << from;
  bytes.replace(at + 1, from.size(), to);
  std::ofstream(dir / "model.safetensors", std::ios::binary) << bytes;
}

}  // namespace

// A family's own checkpoint names in every message: DistilBERT and ALBERT checkpoints missing a tensor
// (ALBERT's shared layer groups, and names whose canonical form contains another's).
TEST(ModelLoadingErrors, FamilyTensorsAreNamedAsTheCheckpointNamesThem) {
  const struct {
    const char* family;
    std::string tensor, shape;
  } cases[] = {
      {"distilbert", "distilbert.transformer.layer.1.attention.k_lin.weight", "[32, 32]"},
      {"distilbert", "distilbert.transformer.layer.0.sa_layer_norm.weight", "[32]"},
      {"albert", "albert.encoder.albert_layer_groups.1.albert_layers.0.attention.dense.weight", "[32, 32]"},
      {"albert", "albert.encoder.albert_layer_groups.0.albert_layers.0.full_layer_layer_norm.bias", "[32]"},
  };
  for (const auto& c : cases) {
    auto dir = family_model_copy(c.family, "err_family_" + std::to_string(&c - cases));
    if (dir.empty())
      GTEST_SKIP() << c.family << " fixture missing: made by tests/reference/make_family_fixtures.py during the README test command";
    EXPECT_EQ(load_model(dir).config.model_type, c.family);
    std::string renamed = c.tensor;
    renamed[renamed.size() - 3] = 'X';
    rename_tensor(dir, c.tensor, renamed);
    auto msg = load_error(dir);
    EXPECT_MENTIONS(msg, "missing tensor '" + c.tensor + "' " + c.shape);
    EXPECT_MENTIONS(msg, "unexpected tensor '" + renamed + "' (not part of a " + c.family + " encoder)");
  }
}

TEST(ModelLoadingErrors, AlbertLayerGroupsAreChecked) {
  auto dir = family_model_copy("albert", "err_albert_groups");
  if (dir.empty())
    GTEST_SKIP() << "albert fixture missing: made by tests/reference/make_family_fixtures.py during the README test command";
  auto config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
  config["inner_group_num"] = 2;
  std::ofstream(dir / "config.json") << config.dump();
  EXPECT_MENTIONS(load_error(dir), "inner_group_num 2 is not supported");
  config["inner_group_num"] = 1;
  config["num_hidden_groups"] = 4;  // more groups than the 3 layers
  std::ofstream(dir / "config.json") << config.dump();
  EXPECT_MENTIONS(load_error(dir), "num_hidden_groups must be between 1 and num_hidden_layers, got 4");
}

// DeBERTa: what attnscan does not implement is refused by field, and tensors are named as the checkpoint
// names them (the v2-shaped fixture has its own position projections).
TEST(ModelLoadingErrors, DebertaSettingsAndTensorsAreNamed) {
  auto dir = family_model_copy("deberta-v2", "err_deberta");
  if (dir.empty())
    GTEST_SKIP() << "deberta-v2 fixture missing: made by tests/reference/make_family_fixtures.py during the README test command";
  const auto config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
  const auto c = load_model(dir).config;
  EXPECT_TRUE(c.disentangled.adds_c2p() && !c.disentangled.adds_p2c() && !c.disentangled.share_att_key);
  auto with = [&](const char* key, const nlohmann::json& value) {
    auto changed = config;
    changed[key] = value;
    std::ofstream(dir / "config.json") << changed.dump();
    return load_error(dir);
  };
  EXPECT_MENTIONS(with("conv_kernel_size", 3), "conv_kernel_size 3 is not supported");
  EXPECT_MENTIONS(with("pos_att_type", "c2p|p2p"), "pos_att_type 'p2p' is not supported (supported: c2p, p2c)");
  EXPECT_MENTIONS(with("pos_att_type", 5), "field 'pos_att_type' must be a list or a string");
  // p2c as well: its projection is missing from the checkpoint
  EXPECT_MENTIONS(with("pos_att_type", "c2p|p2c"),
                  "missing tensor 'deberta.encoder.layer.0.attention.self.pos_query_proj.weight' [32, 32]");
  std::ofstream(dir / "config.json") << config.dump();
  rename_tensor(dir, "deberta.encoder.layer.1.attention.self.query_proj.weight",
                "deberta.encoder.layer.1.attention.self.query_proX.weight");
  EXPECT_MENTIONS(load_error(dir), "missing tensor 'deberta.encoder.layer.1.attention.self.query_proj.weight' [32, 32]");
}

TEST(ModelLoadingErrors, MissingFilesAndBadConfigFieldsAreNamed) {
  auto dir = test::build_model(test::scratch_dir("err_files"), test::tiny_shape());
  std::ofstream(dir / "config.json") << R"({"model_type": "bert", "vocab_size": "many"})";
  auto msg = load_error(dir);
  EXPECT_MENTIONS(msg, (dir / "config.json").string());
  EXPECT_MENTIONS(msg, "field 'vocab_size' has the wrong type");
  fs::remove(dir / "model.safetensors");
  EXPECT_MENTIONS(load_error(dir), (dir / "model.safetensors").string() + ": missing from the model directory");
  EXPECT_MENTIONS(load_error(dir / "nope"), "model directory not found");
}
