// Attention of every decoder family against Hugging Face's eager attention (transformers 5.x on PyPI torch):
// random causal LMs of GPT-2, Llama (default, linear, dynamic, YaRN and Llama 3 RoPE; grouped-query attention;
// tied and untied heads), Mistral (sliding window), Qwen2 (q/k/v biases), Qwen3 (q/k norms), Gemma 3 (sandwich
// norms, local and global layers), GPT-NeoX (parallel and sequential residual, partial rotary), and the real
// SmolLM2-135M-Instruct, each alone and in a right-padded batch. attnscan's attention must lie within 1e-5 of
// HF's fp32, or no further from the float64 forward than HF's own fp32 is; above the diagonal and outside the
// sliding windows it must be exactly 0. References: tests/reference/make_decoder_fixtures.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "encoder/encoder.hpp"
#include "model/model_location.hpp"
#include "model/model_tokenizer.hpp"
#include "model/safetensors.hpp"
#include "support/model_builder.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

const float* values(const TensorView& t) { return reinterpret_cast<const float*>(t.data); }

Encoding encoding_of(const TensorView& ids) {
  Encoding e;
  const auto* id = reinterpret_cast<const int64_t*>(ids.data);
  for (int64_t t = 0; t < ids.numel(); ++t) e.ids.push_back(static_cast<int32_t>(id[t])), e.type_ids.push_back(0);
  return e;
}

struct Distance {
  double to_fp32 = 0, to_fp64 = 0, hf_to_fp64 = 0, above_diagonal = 0;
};

// Row b of `out` against HF's fp32 (attn) and fp64 (attn64) maps of one text.
Distance distance(const EncoderOutput& out, int64_t b, const TensorView& attn, const TensorView* attn64) {
  const int64_t L = attn.shape[0], H = attn.shape[1], n = attn.shape[2];
  const float* r = values(attn);
  const auto* r64 = attn64 ? reinterpret_cast<const double*>(attn64->data) : nullptr;
  Distance d;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t q = 0; q < n; ++q)
        for (int64_t k = 0; k < n; ++k) {
          const double ours = out.attention_at(b, l, h)[q * out.seq_len + k];
          const std::size_t at = static_cast<std::size_t>(((l * H + h) * n + q) * n + k);
          d.to_fp32 = std::max(d.to_fp32, std::fabs(ours - r[at]));
          if (r64) {
            d.to_fp64 = std::max(d.to_fp64, std::fabs(ours - r64[at]));
            d.hf_to_fp64 = std::max(d.hf_to_fp64, std::fabs(double(r[at]) - r64[at]));
          }
          if (k > q) d.above_diagonal = std::max(d.above_diagonal, std::fabs(ours));
        }
  return d;
}

class DecoderParity : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = test::fixture_dir() / "decoders" / GetParam();
    if (!fs::exists(dir_ / "reference" / "texts.json"))
      GTEST_SKIP() << "reference " << dir_ << " missing: made by tests/reference/make_decoder_fixtures.py (needs the "
                   << "peer venv of scripts/make_peer_venv.sh, the trained tokenizers and ../shared/datasets)";
    std::ifstream in(dir_ / "reference" / "texts.json");
    meta_ = nlohmann::json::parse(in);
    model_dir_ = GetParam() == "smollm2" ? models_cache_dir() / "SmolLM2-135M-Instruct" : dir_ / "model";
    if (!fs::exists(model_dir_ / "config.json")) GTEST_SKIP() << model_dir_ << " missing: made by scripts/fetch_models.sh";
    ref_ = std::make_unique<SafetensorsFile>(dir_ / "reference" / "attention.safetensors");
  }

  // The sliding window of layer l from the reference's settings (0: none).
  int64_t window(int64_t l) const {
    const auto& s = meta_["settings"];
    if (!s.contains("sliding_layers") || !s["sliding_layers"].is_object()) return 0;
    const auto key = std::to_string(l);
    return s["sliding_layers"].contains(key) ? s["sliding_layers"][key].get<int64_t>() : 0;
  }

  fs::path dir_, model_dir_;
  nlohmann::json meta_;
  std::unique_ptr<SafetensorsFile> ref_;
};

TEST_P(DecoderParity, AttentionEqualsHuggingFaceAloneAndInABatch) {
  const LoadedModel model = load_model(model_dir_);
  ASSERT_TRUE(model.config.described_by_layers());
  const Transformer transformer(model, EncoderOptions{});
  const std::size_t texts = meta_["texts"].size();
  std::vector<Encoding> encodings;
  for (std::size_t i = 0; i < texts; ++i) encodings.push_back(encoding_of(*ref_->find("ids." + std::to_string(i))));
  int64_t checked = 0;
  Distance worst;
  for (std::size_t i = 0; i < texts; ++i) {
    const auto& e = encodings[i];
    if (static_cast<int64_t>(e.size()) > model.config.max_tokens()) continue;  // dynamic RoPE's stretch: refused below
    const EncoderOutput out = transformer.forward(TokenBatch::from_encodings({&e}, 0));
    const Distance d = distance(out, 0, *ref_->find("attn." + std::to_string(i)), ref_->find("attn64." + std::to_string(i)));
    SCOPED_TRACE("text " + std::to_string(i) + " (" + std::to_string(e.size()) + " tokens)");
    EXPECT_TRUE(d.to_fp32 <= 1e-5 || d.to_fp64 <= d.hf_to_fp64)
        << "max |attnscan - HF fp32| " << d.to_fp32 << ", |attnscan - fp64| " << d.to_fp64 << ", |HF fp32 - fp64| "
        << d.hf_to_fp64;
    EXPECT_EQ(d.above_diagonal, 0.0) << "a query attends to a later token";
    worst.to_fp32 = std::max(worst.to_fp32, d.to_fp32), worst.to_fp64 = std::max(worst.to_fp64, d.to_fp64);
    worst.hf_to_fp64 = std::max(worst.hf_to_fp64, d.hf_to_fp64);
    for (int64_t l = 0; l < out.layers; ++l) {
      const int64_t w = window(l);
      if (w <= 0) continue;
      const int64_t n = static_cast<int64_t>(e.size());
      for (int64_t h = 0; h < out.heads; ++h)
        for (int64_t q = 0; q < n; ++q)
          for (int64_t k = 0; k + w <= q; ++k)
            ASSERT_EQ(out.attention_at(0, l, h)[q * out.seq_len + k], 0.0f)
                << "layer " << l << " head " << h << ": query " << q << " sees key " << k << " outside its window of " << w;
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
  std::cout << GetParam() << ": " << checked << " texts, max |attnscan - HF fp32| " << worst.to_fp32
            << ", |attnscan - fp64| " << worst.to_fp64 << ", |HF fp32 - fp64| " << worst.hf_to_fp64 << "\n";
  // The first texts together, right-padded: each row equal to HF as alone (the attention of a row is computed on
  // its own block; the linear layers' row blocking may round a padded batch's rows otherwise on some CPUs).
  const std::size_t batch = std::min<std::size_t>(texts, meta_.value("batch", 4));
  std::vector<const Encoding*> rows;
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < batch; ++i)
    if (static_cast<int64_t>(encodings[i].size()) <= model.config.max_tokens()) rows.push_back(&encodings[i]), which.push_back(i);
  const EncoderOutput together = transformer.forward(TokenBatch::from_encodings(rows, 0));
  for (std::size_t b = 0; b < rows.size(); ++b) {
    const std::string i = std::to_string(which[b]);
    const Distance d = distance(together, static_cast<int64_t>(b), *ref_->find("attn." + i), ref_->find("attn64." + i));
    EXPECT_TRUE(d.to_fp32 <= 1e-5 || d.to_fp64 <= d.hf_to_fp64)
        << "text " << i << " in a padded batch of " << rows.size() << ": max |attnscan - HF fp32| " << d.to_fp32
        << ", |attnscan - fp64| " << d.to_fp64 << ", |HF fp32 - fp64| " << d.hf_to_fp64;
    EXPECT_EQ(d.above_diagonal, 0.0) << "text " << i << " in a batch attends to a later token";
  }
}

TEST_P(DecoderParity, LongerThanTheModelTakesIsRefusedByName) {
  const LoadedModel model = load_model(model_dir_);
  const Transformer transformer(model, EncoderOptions{});
  Encoding e;
  e.ids.assign(static_cast<std::size_t>(model.config.max_tokens() + 1), 1);
  e.type_ids.assign(e.ids.size(), 0);
  try {
    transformer.forward(TokenBatch::from_encodings({&e}, 0));
    FAIL() << "a sequence past the model's maximum was run";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("exceeds the model's maximum"), std::string::npos) << err.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Families, DecoderParity,
                         ::testing::Values("gpt2", "llama", "llama_linear", "llama_dynamic", "llama_yarn", "llama3", "mistral",
                                           "qwen2", "qwen3", "gemma3_text", "gpt_neox", "gpt_neox_sequential", "smollm2"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace

namespace {

// The GPT-2 fixture's model directory, or empty (the test skips saying so).
fs::path gpt2_fixture() {
  const fs::path dir = test::fixture_dir() / "decoders" / "gpt2" / "model";
  return fs::exists(dir / "model.safetensors") ? dir : fs::path();
}

// DIR's config and tokenizer files copied to `to`, its tensors (bar `drop`) written over `shards` files and
// a model.safetensors.index.json naming them (one shard: model.safetensors itself).
fs::path copy_model(const fs::path& dir, const fs::path& to, int shards, const std::string& drop = "") {
  fs::remove_all(to);
  fs::create_directories(to);
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path().extension() == ".json" && f.path().filename() != "model.safetensors.index.json") fs::copy(f.path(), to / f.path().filename());
  const SafetensorsFile st(dir / "model.safetensors");
  std::vector<std::vector<test::Blob>> parts(static_cast<std::size_t>(shards));
  nlohmann::json weight_map = nlohmann::json::object();
  std::size_t i = 0;
  for (const auto& t : st.tensors()) {
    if (t.name == drop) continue;
    const std::size_t s = i++ % parts.size();
    parts[s].push_back({t.name, t.dtype_tag, t.shape, std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(t.data),
                                                                           reinterpret_cast<const uint8_t*>(t.data) + t.nbytes)});
    weight_map[t.name] = "model-" + std::to_string(s + 1) + "-of-" + std::to_string(shards) + ".safetensors";
  }
  if (shards == 1) {
    test::write_safetensors(to / "model.safetensors", parts[0]);
    return to;
  }
  for (std::size_t s = 0; s < parts.size(); ++s)
    test::write_safetensors(to / ("model-" + std::to_string(s + 1) + "-of-" + std::to_string(shards) + ".safetensors"), parts[s]);
  std::ofstream(to / "model.safetensors.index.json") << nlohmann::json{{"metadata", nlohmann::json::object()}, {"weight_map", weight_map}}.dump();
  return to;
}

}  // namespace

TEST(DecoderCheckpoints, AShardedCheckpointGivesTheSameAttention) {
  const fs::path dir = gpt2_fixture();
  if (dir.empty()) GTEST_SKIP() << "decoders/gpt2 missing: made by tests/reference/make_decoder_fixtures.py";
  const fs::path sharded = copy_model(dir, test::scratch_dir("sharded_gpt2") / "model", 3);
  ASSERT_FALSE(fs::exists(sharded / "model.safetensors"));
  Encoding e;
  for (int32_t id : {5, 17, 300, 42, 9, 77, 1000, 3}) e.ids.push_back(id), e.type_ids.push_back(0);
  const auto batch = TokenBatch::from_encodings({&e}, 0);
  const EncoderOutput whole = Transformer(load_model(dir), EncoderOptions{}).forward(batch);
  const EncoderOutput shards = Transformer(load_model(sharded), EncoderOptions{}).forward(batch);
  ASSERT_EQ(whole.attention.size(), shards.attention.size());
  EXPECT_EQ(0, std::memcmp(whole.attention.data(), shards.attention.data(), whole.attention.size() * sizeof(float)));
}

TEST(DecoderCheckpoints, AMissingTensorIsNamedAsTheCheckpointNamesIt) {
  const fs::path dir = gpt2_fixture();
  if (dir.empty()) GTEST_SKIP() << "decoders/gpt2 missing: made by tests/reference/make_decoder_fixtures.py";
  const fs::path broken = copy_model(dir, test::scratch_dir("broken_gpt2") / "model", 1, "transformer.h.1.attn.c_attn.weight");
  try {
    load_model(broken);
    FAIL() << "a checkpoint without h.1's c_attn loaded";
  } catch (const ModelError& err) {
    EXPECT_NE(std::string(err.what()).find("missing tensor 'h.1.attn.c_attn.weight'"), std::string::npos) << err.what();
  }
}

namespace {

// A stored tensor of the GPT-2 fixture as doubles, in its stored layout.
std::vector<double> stored_values(const SafetensorsFile& st, const std::string& name) {
  const TensorView* t = st.find(name);
  if (!t) throw std::runtime_error("no tensor " + name);
  const float* v = values(*t);
  return std::vector<double>(v, v + t->numel());
}

}  // namespace

// Value norms ||v_h(x_j) W_O^h|| of GPT-2, recomputed in double from each layer's input (the forward's hidden
// states) and the checkpoint's Conv1D weights as stored: ln_1, then c_attn's value columns with their bias,
// then head h's rows of c_proj.
TEST(DecoderCheckpoints, ValueNormsEqualTheirDefinition) {
  const fs::path dir = gpt2_fixture();
  if (dir.empty()) GTEST_SKIP() << "decoders/gpt2 missing: made by tests/reference/make_decoder_fixtures.py";
  const LoadedModel model = load_model(dir);
  const Transformer transformer(model, EncoderOptions{});
  Encoding e;
  for (int32_t id : {5, 17, 300, 42, 9, 77, 1000, 3, 250}) e.ids.push_back(id), e.type_ids.push_back(0);
  const EncoderOutput out = transformer.forward(TokenBatch::from_encodings({&e}, 0), ForwardOutputs{true, true, false});
  const SafetensorsFile st(dir / "model.safetensors");
  const int64_t H = model.config.hidden_size, NH = model.config.num_heads, D = H / NH, n = out.seq_len;
  double worst = 0;
  for (int64_t l = 0; l < out.layers; ++l) {
    const std::string at = "transformer.h." + std::to_string(l) + ".";
    const auto g = stored_values(st, at + "ln_1.weight"), b = stored_values(st, at + "ln_1.bias");
    const auto w = stored_values(st, at + "attn.c_attn.weight"), wb = stored_values(st, at + "attn.c_attn.bias");  // [H, 3H]
    const auto o = stored_values(st, at + "attn.c_proj.weight");  // [H in, H out]
    for (int64_t j = 0; j < n; ++j) {
      const float* x = out.hidden_states.data() + (l * n + j) * H;
      double mean = 0, var = 0;
      for (int64_t k = 0; k < H; ++k) mean += x[k];
      mean /= double(H);
      for (int64_t k = 0; k < H; ++k) var += (x[k] - mean) * (x[k] - mean);
      var /= double(H);
      std::vector<double> normed(static_cast<std::size_t>(H)), v(static_cast<std::size_t>(H));
      for (int64_t k = 0; k < H; ++k) normed[k] = (x[k] - mean) / std::sqrt(var + model.config.layer_norm_eps) * g[k] + b[k];
      for (int64_t c = 0; c < H; ++c) {
        v[c] = wb[2 * H + c];
        for (int64_t k = 0; k < H; ++k) v[c] += normed[k] * w[k * 3 * H + 2 * H + c];
      }
      for (int64_t h = 0; h < NH; ++h) {
        double sq = 0;
        for (int64_t c = 0; c < H; ++c) {
          double f = 0;
          for (int64_t d = 0; d < D; ++d) f += v[h * D + d] * o[(h * D + d) * H + c];
          sq += f * f;
        }
        worst = std::max(worst, std::fabs(std::sqrt(sq) - out.value_norms_at(0, l, h)[j]) / std::max(1.0, std::sqrt(sq)));
      }
    }
  }
  std::cout << "gpt2 value norms: max relative |attnscan - double| " << worst << "\n";
  EXPECT_LT(worst, 1e-5);
}

namespace {

// DIR copied to `to` with head h of layer l removed from the output projection (its slice of the stored weight
// zeroed: GPT-2's Conv1D rows, Llama-style columns), which is what gating its probabilities by 0 gives.
fs::path without_head(const fs::path& dir, const fs::path& to, const std::string& family, int64_t l, int64_t h, int64_t D) {
  const fs::path copy = copy_model(dir, to, 1);
  const SafetensorsFile st(copy / "model.safetensors");
  std::vector<test::Blob> blobs;
  const std::string gpt2 = "transformer.h." + std::to_string(l) + ".attn.c_proj.weight";
  const std::string llama = "model.layers." + std::to_string(l) + ".self_attn.o_proj.weight";
  for (const auto& t : st.tensors()) {
    test::Blob b{t.name, t.dtype_tag, t.shape, std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(t.data),
                                                                   reinterpret_cast<const uint8_t*>(t.data) + t.nbytes)};
    auto* w = reinterpret_cast<float*>(b.bytes.data());
    if (t.name == (family == "gpt2" ? gpt2 : llama)) {
      const int64_t rows = t.shape[0], cols = t.shape[1];
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          if (family == "gpt2" ? (r >= h * D && r < (h + 1) * D) : (c >= h * D && c < (h + 1) * D)) w[r * cols + c] = 0;
    }
    blobs.push_back(std::move(b));
  }
  test::write_safetensors(copy / "model.safetensors", blobs);
  return copy;
}

// The mean over the row's tokens of the final norm's output, in double, from the last hidden state.
std::vector<double> pooled_output(const EncoderOutput& out, const ModelConfig& c, const SafetensorsFile& st,
                                  const std::string& family) {
  const int64_t H = c.hidden_size, n = out.seq_len;
  const auto w = stored_values(st, family == "gpt2" ? "transformer.ln_f.weight" : "model.norm.weight");
  const auto b = family == "gpt2" ? stored_values(st, "transformer.ln_f.bias") : std::vector<double>(static_cast<std::size_t>(H), 0.0);
  std::vector<double> pooled(static_cast<std::size_t>(H), 0.0);
  for (int64_t t = 0; t < n; ++t) {
    const float* x = out.hidden_states.data() + (c.num_layers * n + t) * H;
    double mean = 0, square = 0;
    for (int64_t k = 0; k < H; ++k) mean += x[k], square += double(x[k]) * x[k];
    mean /= double(H), square /= double(H);
    for (int64_t k = 0; k < H; ++k) {
      const double y = family == "gpt2" ? (x[k] - mean) / std::sqrt(square - mean * mean + c.final_norm.eps) * w[k] + b[k]
                                        : x[k] / std::sqrt(square + c.final_norm.eps) * w[k];
      pooled[static_cast<std::size_t>(k)] += y / double(n);
    }
  }
  return pooled;
}

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t k = 0; k < a.size(); ++k) ab += a[k] * b[k], aa += a[k] * a[k], bb += b[k] * b[k];
  return ab / std::sqrt(aa * bb);
}

}  // namespace

// Ablation importance of a decoder head, D = 1 - cos(e, e_-lh), equals the same quantity from two ordinary
// forwards: the model as it is and the model with that head's slice of the output projection zeroed (GPT-2:
// LayerNorm, biases; Qwen3: RMS norms, head_dim 16 beside hidden 48, grouped-query attention).
TEST(DecoderCheckpoints, AblationEqualsAForwardWithoutTheHead) {
  for (const std::string family : {"gpt2", "qwen3"}) {
    const fs::path dir = test::fixture_dir() / "decoders" / family / "model";
    if (!fs::exists(dir / "model.safetensors")) GTEST_SKIP() << dir << " missing: made by tests/reference/make_decoder_fixtures.py";
    const LoadedModel model = load_model(dir);
    const Transformer transformer(model, EncoderOptions{});
    Encoding e;
    for (int32_t id : {5, 17, 300, 42, 9, 77, 1000, 3, 250, 11}) e.ids.push_back(id), e.type_ids.push_back(0);
    const auto batch = TokenBatch::from_encodings({&e}, 0);
    ImportanceRequest req;
    req.ablation = true;
    const HeadImportance imp = transformer.head_importance(batch, req);
    const SafetensorsFile st(dir / "model.safetensors");
    const auto e_full = pooled_output(transformer.forward(batch, ForwardOutputs{true, false, false}), model.config, st, family);
    const int64_t D = model.config.layer_spec(0).attention.head_dim;
    for (const auto& [l, h] : {std::pair<int64_t, int64_t>{0, 1}, {model.config.num_layers - 1, 2}}) {
      const fs::path cut = without_head(dir, test::scratch_dir("ablated_" + family) / "model", family, l, h, D);
      const LoadedModel cut_model = load_model(cut);
      const auto e_cut = pooled_output(Transformer(cut_model, EncoderOptions{}).forward(batch, ForwardOutputs{true, false, false}),
                                       cut_model.config, SafetensorsFile(cut / "model.safetensors"), family);
      const double want = 1 - cosine(e_full, e_cut);
      const float got = imp.ablation[static_cast<std::size_t>(l * imp.heads + h)];
      std::cout << family << " layer " << l << " head " << h << ": ablation " << got << ", two forwards " << want << "\n";
      EXPECT_NEAR(got, want, 1e-5 + 1e-3 * std::fabs(want)) << family << " layer " << l << " head " << h;
      EXPECT_GT(want, 1e-6) << "the head changes nothing: the check cannot fail";
    }
  }
}

// Gradient importance with a decoder's LM head, |dL/d gate| with L the mean next-token cross-entropy of the
// text, equals HF's: make_decoder_fixtures.py gates each layer's attention weights (after the softmax) in
// transformers 5.25's eager attention and differentiates HF's own causal LM loss (labels = ids).
TEST(DecoderCheckpoints, LmGradientImportanceEqualsHuggingFace) {
  int64_t checked = 0;
  for (const std::string family : {"gpt2", "llama", "qwen3"}) {
    const fs::path dir = test::fixture_dir() / "decoders" / family;
    if (!fs::exists(dir / "reference" / "attention.safetensors")) continue;
    const SafetensorsFile ref(dir / "reference" / "attention.safetensors");
    if (!ref.find("lm_grad.0")) GTEST_SKIP() << dir << " has no lm_grad: regenerate it with tests/reference/make_decoder_fixtures.py";
    const LoadedModel model = load_model(dir / "model");
    const TaskHead head = load_task_head(model, HeadObjective::Lm);
    const Transformer transformer(model, EncoderOptions{}, &head);
    ImportanceRequest req;
    req.gradient = true;
    double worst = 0;
    for (int i = 0; ref.find("lm_grad." + std::to_string(i)); ++i) {
      const Encoding e = encoding_of(*ref.find("ids." + std::to_string(i)));
      const HeadImportance imp = transformer.head_importance(TokenBatch::from_encodings({&e}, 0), req);
      const TensorView& want = *ref.find("lm_grad." + std::to_string(i));
      for (int64_t k = 0; k < want.numel(); ++k)
        worst = std::max(worst, std::fabs(double(imp.gradient[static_cast<std::size_t>(k)]) - values(want)[k]) /
                                    std::max(1e-3, double(values(want)[k])));
      ++checked;
    }
    std::cout << family << " lm gradient importance: max relative |attnscan - HF| " << worst << "\n";
    EXPECT_LT(worst, 1e-3) << family;
  }
  if (checked == 0) GTEST_SKIP() << "decoders/{gpt2,llama,qwen3} missing: made by tests/reference/make_decoder_fixtures.py";
}

TEST(DecoderCheckpoints, LmObjectiveNeedsADecoder) {
  const fs::path dir = test::fixture_dir() / "families" / "roberta" / "model";
  if (!fs::exists(dir / "config.json")) GTEST_SKIP() << dir << " missing: made by tests/reference/make_family_fixtures.py";
  try {
    load_task_head(load_model(dir), HeadObjective::Lm);
    FAIL() << "an encoder got an LM head";
  } catch (const ModelError& err) {
    EXPECT_NE(std::string(err.what()).find("importance.gradient lm needs a causal language model"), std::string::npos) << err.what();
  }
}

// Value zeroing on decoders equals HF's: make_decoder_fixtures.py zeroes column j of one layer's attention
// weights in transformers 5.25's eager attention (token j's value vectors, as they meet the weights) and takes
// 1 - cos of that layer's outputs, rows divided by their sum (GPT-2; Gemma 3 with sandwich norms and windows).
TEST(DecoderCheckpoints, ValueZeroingEqualsHuggingFace) {
  int64_t checked = 0;
  for (const std::string family : {"gpt2", "gemma3_text"}) {
    const fs::path dir = test::fixture_dir() / "decoders" / family;
    if (!fs::exists(dir / "reference" / "attention.safetensors")) continue;
    const SafetensorsFile ref(dir / "reference" / "attention.safetensors");
    const TensorView* want = ref.find("value_zeroing.0");
    if (!want) GTEST_SKIP() << dir << " has no value_zeroing: regenerate it with tests/reference/make_decoder_fixtures.py";
    const Transformer transformer(load_model(dir / "model"), EncoderOptions{});
    const Encoding e = encoding_of(*ref.find("ids.0"));
    MixingRequest req;
    req.value_zeroing = true;
    const ContextMixing mix = transformer.context_mixing(TokenBatch::from_encodings({&e}, 0), req);
    const auto* w = reinterpret_cast<const double*>(want->data);
    double worst = 0;
    for (int64_t k = 0; k < want->numel(); ++k) worst = std::max(worst, std::fabs(mix.value_zeroing[0][static_cast<std::size_t>(k)] - w[k]));
    std::cout << family << " value zeroing: max |attnscan - HF| " << worst << "\n";
    EXPECT_LT(worst, 1e-4) << family;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "decoders/{gpt2,gemma3_text} missing: made by tests/reference/make_decoder_fixtures.py";
}

// A decoder's directory that also has vocab.json + merges.txt (as GPT-2's hub directory does) reads
// tokenizer.json under `tokenizer: auto`: its family prefers it (the slow files would read as RoBERTa's).
TEST(DecoderCheckpoints, ADecoderPrefersItsTokenizerJson) {
  const fs::path dir = gpt2_fixture();
  if (dir.empty()) GTEST_SKIP() << "decoders/gpt2 missing: made by tests/reference/make_decoder_fixtures.py";
  const fs::path copy = copy_model(dir, test::scratch_dir("gpt2_both_tokenizers") / "model", 1);
  std::ofstream(copy / "vocab.json") << R"({"a": 0, "b": 1, "ab": 2})";
  std::ofstream(copy / "merges.txt") << "#version: 0.2\na b\n";
  const LoadedModel model = load_model(copy);
  EXPECT_NE(load_tokenizer(copy, model.config).source().find("tokenizer.json"), std::string::npos)
      << load_tokenizer(copy, model.config).source();
  try {  // an explicit choice still wins: the slow files are read (and this pair of them lacks RoBERTa's specials)
    load_tokenizer(copy, model.config, TokenizerFile::VocabMerges);
    FAIL() << "tokenizer: vocab_merges read something";
  } catch (const ModelError& err) {
    EXPECT_NE(std::string(err.what()).find("vocab.json"), std::string::npos) << err.what();
  }
}
