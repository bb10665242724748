// Head gates, ablation importance and gradient importance (encoder.hpp: ImportanceRequest). Rows of
// one length go through together without padding, so each row's numbers are those of the row alone.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <limits>

#include "common/error.hpp"
#include "encoder/encoder_impl.hpp"

namespace attnscan {

namespace {

// Tokens one ablation chunk holds (heads x rows x length): bounds its memory, as batch_tokens does
// the forward's.
constexpr int64_t kAblationTokens = 8192;
constexpr int64_t kGradientTokens = 2048;  // rows x length of one backward pass

at::Tensor activate(const at::Tensor& x, HeadActivationKind a) {
  switch (a) {
    case HeadActivationKind::Tanh: return at::tanh(x);
    case HeadActivationKind::Relu: return at::relu(x);
    case HeadActivationKind::GeluErf: return at::gelu(x);
    case HeadActivationKind::GeluTanh: return at::gelu(x, "tanh");
  }
  return x;
}

// D[l][h] for `rows` (all n tokens long) into out [batch][layers][heads].
void ablate(const Transformer::Impl& m, const TokenBatch& batch, const std::vector<int64_t>& rows, float* out) {
  c10::InferenceMode guard;
  const int64_t R = static_cast<int64_t>(rows.size()), n = batch.lengths[static_cast<std::size_t>(rows[0])];
  const auto steps = m.steps(n);
  const int64_t H = steps->hidden(), NH = steps->heads(), D = steps->head_dim(), LN = steps->layers();
  const RowGroup in = gather_rows(batch, rows, m.device);
  std::vector<at::Tensor> inputs, contexts;  // each layer's input and attention context, ungated
  auto x = steps->embed(in);
  for (int64_t li = 0; li < LN; ++li) {
    inputs.push_back(x);
    contexts.push_back(steps->attend(li, x, R, {}));
    x = steps->finish_layer(li, contexts.back(), x);
  }
  const auto e = steps->final_output(x).view({R, n, H}).mean(1);  // [R, H], the output as the model returns it
  // Copy h of a layer's context has head h's part zeroed: what xi[l][h] = 0 gives (the other heads'
  // parts times 1, exactly as they were).
  const auto keep = (1 - at::eye(NH, x.options())).view({NH, 1, NH, 1, 1});
  for (int64_t li = 0; li < LN; ++li) {
    auto ctx = (contexts[static_cast<std::size_t>(li)].unsqueeze(0) * keep).reshape({NH * R, NH, n, D});
    auto y = steps->finish_layer(li, ctx, inputs[static_cast<std::size_t>(li)].repeat({NH, 1}));
    for (int64_t above = li + 1; above < LN; ++above) y = steps->finish_layer(above, steps->attend(above, y, NH * R, {}), y);
    const auto e_ablated = steps->final_output(y).view({NH, R, n, H}).mean(2);      // [NH, R, H]
    const auto d = (1 - at::cosine_similarity(e.unsqueeze(0), e_ablated, -1)).t().contiguous();  // [R, NH]
    const float* dp = d.data_ptr<float>();
    for (int64_t r = 0; r < R; ++r)
      std::copy_n(dp + r * NH, NH, out + (rows[static_cast<std::size_t>(r)] * LN + li) * NH);
  }
}

// The task head's summed loss over the rows: each row's own loss (HF's, for that row alone), so that
// d(sum)/d(gate of row r) = d(loss of r)/d(its gate).
at::Tensor head_loss(const Transformer::Impl& m, const at::Tensor& hidden /*[R, n, H]*/, const at::Tensor& ids /*[R * n]*/,
                     const ImportanceRequest& req, const std::vector<int64_t>& rows, const std::vector<int64_t>& flat_masked,
                     const std::vector<int64_t>& targets, const std::vector<float>& weights) {
  const HeadTensors& h = *m.head;
  auto opts = at::TensorOptions().dtype(at::kLong);
  if (h.head.objective == HeadObjective::Lm) {  // each row's mean cross-entropy of the token after each token
    const int64_t R = hidden.size(0), n = hidden.size(1);
    const at::Tensor logits = at::linear(hidden.narrow(1, 0, n - 1), h.out_w).reshape({R * (n - 1), -1});
    const at::Tensor next = ids.view({R, n}).narrow(1, 1, n - 1).reshape({-1});
    return at::cross_entropy_loss(logits, next, {}, at::Reduction::None).view({R, n - 1}).mean(1).sum();
  }
  if (h.head.objective == HeadObjective::Classification) {
    std::vector<int64_t> labels;
    for (auto r : rows) labels.push_back(req.labels[static_cast<std::size_t>(r)]);
    auto pooled = activate(at::linear(hidden.select(1, 0), h.dense_w, h.dense_b), h.head.activation);
    auto logits = at::linear(pooled, h.out_w, h.out_b);
    auto target = at::from_blob(labels.data(), {static_cast<int64_t>(labels.size())}, opts).clone().to(m.device);
    return at::cross_entropy_loss(logits, target, {}, at::Reduction::Sum);
  }
  const int64_t H = hidden.size(2), M = static_cast<int64_t>(flat_masked.size());
  auto where = at::from_blob(const_cast<int64_t*>(flat_masked.data()), {M}, opts).clone().to(m.device);
  auto z = activate(at::linear(hidden.reshape({-1, H}).index_select(0, where), h.dense_w, h.dense_b), h.head.activation);
  z = layer_norm(std::move(z), h.norm_w, h.norm_b, h.head.norm_eps);
  auto logits = at::linear(z, h.out_w, h.out_b);
  auto target = at::from_blob(const_cast<int64_t*>(targets.data()), {M}, opts).clone().to(m.device);
  auto w = at::from_blob(const_cast<float*>(weights.data()), {M}).clone().to(m.device);
  return (at::cross_entropy_loss(logits, target, {}, at::Reduction::None) * w).sum();  // each row's mean
}

// I[l][h] for `rows` (all n tokens long) into out [batch][layers][heads]; rows without a masked
// position (mlm) stay NaN.
void differentiate(const Transformer::Impl& m, const TokenBatch& batch, std::vector<int64_t> rows,
                   const ImportanceRequest& req, float* out) {
  const auto& c = m.cfg;
  const int64_t n = batch.lengths[static_cast<std::size_t>(rows[0])], NH = c.num_heads, LN = c.num_layers;
  const bool mlm = m.head->head.objective == HeadObjective::Mlm;
  if (m.head->head.objective == HeadObjective::Lm && n < 2) return;  // no next token: no loss
  if (mlm)  // a row with nothing masked has no loss
    rows.erase(std::remove_if(rows.begin(), rows.end(), [&](int64_t r) { return req.masked[static_cast<std::size_t>(r)].empty(); }),
               rows.end());
  if (rows.empty()) return;
  const int64_t R = static_cast<int64_t>(rows.size());
  TokenBatch masked_batch = batch;  // mlm: masked positions get the mask token; the original ids are the targets
  std::vector<int64_t> flat_masked, targets;
  std::vector<float> weights;
  if (mlm)
    for (int64_t r = 0; r < R; ++r) {
      const auto& positions = req.masked[static_cast<std::size_t>(rows[static_cast<std::size_t>(r)])];
      for (auto p : positions) {
        const auto at = static_cast<std::size_t>(rows[static_cast<std::size_t>(r)] * batch.seq_len + p);
        targets.push_back(batch.input_ids[at]);
        masked_batch.input_ids[at] = req.mask_id;
        flat_masked.push_back(r * n + p);
        weights.push_back(1.0f / static_cast<float>(positions.size()));
      }
    }
  c10::AutoGradMode grad(true);
  const RowGroup in = gather_rows(masked_batch, rows, m.device);
  const auto steps = m.steps(n);
  auto gate = at::ones({R, LN, NH}, at::TensorOptions().device(m.device)).set_requires_grad(true);
  auto x = steps->embed(in);
  for (int64_t li = 0; li < LN; ++li) x = steps->finish_layer(li, steps->attend(li, x, R, gate.select(1, li)), x);
  head_loss(m, steps->final_output(x).view({R, n, c.hidden_size}), in.ids, req, rows, flat_masked, targets, weights).backward();
  const auto g = gate.grad().abs().cpu().contiguous();
  const float* gp = g.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) std::copy_n(gp + r * LN * NH, LN * NH, out + rows[static_cast<std::size_t>(r)] * LN * NH);
}

}  // namespace

HeadImportance Transformer::head_importance(const TokenBatch& batch, const ImportanceRequest& request) const {
  try {
    return impl_->head_importance(batch, request);
  } catch (const c10::Error& e) {
    throw_libtorch_error(e, "computing head importance (batch of " + std::to_string(batch.batch) + " x " +
                                std::to_string(batch.seq_len) + " tokens)");
  }
}

HeadImportance Transformer::Impl::head_importance(const TokenBatch& batch, const ImportanceRequest& req) const {
  check_batch(batch);
  const auto B = static_cast<std::size_t>(batch.batch);
  if (req.gradient) {
    if (!head) throw Error("head importance: gradient importance needs the encoder built with a task head");
    if (opt.precision != Precision::F32)
      throw Error("importance.gradient needs engine.precision fp32 (gradients are computed in float32)");
    if (head->head.objective == HeadObjective::Classification && req.labels.size() != B)
      throw Error("head importance: " + std::to_string(req.labels.size()) + " labels for " + std::to_string(B) + " rows");
    if (head->head.objective == HeadObjective::Mlm && (req.masked.size() != B || req.mask_id < 0 || req.mask_id >= cfg.vocab_size))
      throw Error("head importance: the masked positions or the mask token id do not fit the batch");
    for (std::size_t b = 0; b < req.masked.size(); ++b)
      for (auto p : req.masked[b])
        if (p < 0 || p >= batch.lengths[b]) throw Error("head importance: masked position outside row " + std::to_string(b));
  }
  set_compute_threads(opt.threads);
  HeadImportance out;
  out.batch = batch.batch;
  out.layers = cfg.num_layers;
  out.heads = cfg.num_heads;
  const std::size_t size = B * static_cast<std::size_t>(cfg.num_layers * cfg.num_heads);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (req.ablation) {
    out.ablation.assign(size, nan);
    for (const auto& rows : equal_length_chunks(batch, cfg.num_heads, kAblationTokens)) ablate(*this, batch, rows, out.ablation.data());
  }
  if (req.gradient) {
    out.gradient.assign(size, nan);
    for (const auto& rows : equal_length_chunks(batch, 1, kGradientTokens)) differentiate(*this, batch, rows, req, out.gradient.data());
  }
  return out;
}

}  // namespace attnscan
