// Context mixing per layer (encoder.hpp: MixingRequest): value zeroing (Mohebbi et al. 2023) and ALTI
// (Ferrando et al. 2022). Rows of one length go through together without padding, so each row's
// numbers are those of the row alone; every layer's input is the unchanged forward's.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "common/error.hpp"
#include "encoder/encoder_impl.hpp"

namespace attnscan {

namespace {

constexpr int64_t kMixingTokens = 4096;            // tokens one layer pass of value zeroing's variants holds
constexpr int64_t kAltiValues = int64_t(1) << 22;  // floats of one block of ALTI's T_i(x_j) ([i][j][hidden])

// Each row's [n][n] map of layer `li`, [R][n][n] in `m`, into out[row] at layer li.
void store_layer(const at::Tensor& m, const RowGroup& g, int64_t li, std::vector<std::vector<float>>& out,
                 int64_t layers) {
  const auto cpu = m.to(at::kFloat).cpu().contiguous();
  const float* p = cpu.data_ptr<float>();
  const auto nn = static_cast<std::size_t>(g.n * g.n);
  for (std::size_t r = 0; r < g.rows.size(); ++r) {
    auto& dst = out[static_cast<std::size_t>(g.rows[r])];
    if (dst.empty()) dst.assign(static_cast<std::size_t>(layers) * nn, 0.0f);
    std::copy_n(p + r * nn, nn, dst.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(li) * nn));
  }
}

// Each row divided by its sum (a row summing to 0 stays 0).
at::Tensor normalise_rows(const at::Tensor& m) {
  const auto sum = m.sum(-1, /*keepdim=*/true);
  return at::where(sum > 0, m / sum, at::zeros_like(m));
}

// [R, n(i), n(j)]: 1 - cos(y_i, y_i^(-j)), y^(-j) the layer's output with token j's value vectors
// zeroed in every head; the variants of a block of j go through the layer together.
at::Tensor value_zeroing(const LayerSteps& steps, int64_t li, const SelfAttention& a, const at::Tensor& x,
                         const at::Tensor& y, int64_t R, int64_t n) {
  const int64_t H = steps.hidden();
  const int64_t J = std::max<int64_t>(1, kMixingTokens / (R * n));
  // In double: where y_i barely moves, cos is 1 - 1e-6 or closer, below float's resolution.
  auto out = at::empty({n, R, n}, y.options().dtype(at::kDouble));  // [j][row][i]
  const auto y_rows = y.view({1, R, n, H}).to(at::kDouble);
  for (int64_t j0 = 0; j0 < n; j0 += J) {
    const int64_t count = std::min(J, n - j0);
    // keep[j][k] = 0 where k = j: variant j's value vectors with token j's row zeroed
    auto keep = 1 - at::eye(n, y.options()).narrow(0, j0, count);                 // [count, n]
    auto v = a.v.unsqueeze(0) * keep.view({count, 1, 1, n, 1});                     // [count, R, NH, n, D]
    auto ctx = at::matmul(a.probs.unsqueeze(0), v).flatten(0, 1);                   // [count * R, NH, n, D]
    auto zeroed = steps.finish_layer(li, ctx, x.repeat({count, 1})).view({count, R, n, H});
    out.narrow(0, j0, count).copy_(1 - at::cosine_similarity(y_rows, zeroed.to(at::kDouble), -1));
  }
  return out.permute({1, 2, 0});
}

// [R, n(i), n(j)]: max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1). T_i(x_j) = LN_i(sum_h alpha^h_ij f^h(x_j)
// + [i = j] x_i), f^h(x_j) token j's value vector through head h's slice of the output projection,
// LN_i the first LayerNorm of token i as a linear map (centre, divide by token i's own deviation,
// scale by gamma); y the LayerNorm's output. The biases (output projection, beta) belong to no token.
at::Tensor alti(const Transformer::Impl& m, const Layer& L, const SelfAttention& a, const at::Tensor& x,
                const at::Tensor& pre, const at::Tensor& y, int64_t R, int64_t n) {
  const int64_t H = m.cfg.hidden_size;
  const auto f = at::matmul(a.v, L.value_out.unsqueeze(0));                         // [R, NH, n(j), H]
  const auto sigma = at::sqrt(pre.view({R, n, H}).var(-1, /*unbiased=*/false, /*keepdim=*/true) +
                              m.cfg.layer_norm_eps);                                 // [R, n(i), 1]
  const auto y_rows = y.view({R, n, H}), x_rows = x.view({R, n, H});
  auto out = at::empty({R, n, n}, y.options());
  const int64_t I = std::max<int64_t>(1, kAltiValues / (n * H));  // receiving tokens per block
  for (int64_t r = 0; r < R; ++r)
    for (int64_t i0 = 0; i0 < n; i0 += I) {
      const int64_t count = std::min(I, n - i0);
      // t[j][i][:] = sum_h alpha^h_ij f^h(x_j): per j, [count, NH] x [NH, H]
      auto alpha = a.probs[r].narrow(1, i0, count).permute({2, 1, 0});             // [n(j), count(i), NH]
      auto t = at::bmm(alpha, f[r].permute({1, 0, 2})).transpose(0, 1).contiguous();  // [count(i), n(j), H]
      t.diagonal(i0, 0, 1).add_(x_rows[r].narrow(0, i0, count).t());                  // + x_i where j = i
      t = (t - t.mean(-1, /*keepdim=*/true)) / sigma[r].narrow(0, i0, count).unsqueeze(1) * L.ln1_w;
      const auto yi = y_rows[r].narrow(0, i0, count).unsqueeze(1);                    // [count, 1, H]
      const auto c = yi.abs().sum(-1) - (yi - t).abs().sum(-1);                       // [count, n(j)]
      out[r].narrow(0, i0, count).copy_(at::clamp_min(c, 0));
    }
  return out;
}

// Both maps of every layer for one group of equal-length rows (ALTI: the encoder families' post-norm layers).
void mix(const Transformer::Impl& m, const TokenBatch& batch, const std::vector<int64_t>& rows,
         const MixingRequest& req, ContextMixing& out) {
  c10::InferenceMode guard;
  const RowGroup g = gather_rows(batch, rows, m.device);
  const int64_t R = static_cast<int64_t>(rows.size()), n = g.n;
  const auto steps = m.steps(n);
  const int64_t LN = steps->layers();
  auto x = steps->embed(g);
  for (int64_t li = 0; li < LN; ++li) {
    const SelfAttention a = steps->attention(li, x, R);
    const at::Tensor ctx = at::matmul(a.probs, a.v);
    at::Tensor y;
    if (req.alti) {  // the attention block's output before and after its LayerNorm, which ALTI decomposes
      const Layer& L = m.layer(li);
      const auto pre = m.attention_residual(L, m.merge_heads(ctx), x);
      const auto y1 = m.cfg.pre_norm ? pre : m.attention_norm(L, pre);  // pre-norm: the FFN's norm comes inside it
      y = m.feed_forward(L, y1);
      store_layer(normalise_rows(alti(m, L, a, x, pre, y1, R, n)), g, li, out.alti, LN);
    } else {
      y = steps->finish_layer(li, ctx, x);
    }
    if (req.value_zeroing) store_layer(normalise_rows(value_zeroing(*steps, li, a, x, y, R, n)), g, li, out.value_zeroing, LN);
    x = y;
  }
}

}  // namespace

ContextMixing Transformer::context_mixing(const TokenBatch& batch, const MixingRequest& request) const {
  try {
    return impl_->context_mixing(batch, request);
  } catch (const c10::Error& e) {
    throw_libtorch_error(e, "computing context mixing (batch of " + std::to_string(batch.batch) + " x " +
                                std::to_string(batch.seq_len) + " tokens)");
  }
}

ContextMixing Transformer::Impl::context_mixing(const TokenBatch& batch, const MixingRequest& req) const {
  if (stack && req.alti)
    throw Error("ALTI decomposes layers that normalise after the residual; " + cfg.model_type + " normalises before it");
  check_batch(batch);
  set_compute_threads(opt.threads);
  ContextMixing out;
  out.batch = batch.batch;
  out.layers = cfg.num_layers;
  const auto B = static_cast<std::size_t>(batch.batch);
  if (req.value_zeroing) out.value_zeroing.resize(B);
  if (req.alti) out.alti.resize(B);
  if (!req.value_zeroing && !req.alti) return out;
  for (const auto& rows : equal_length_chunks(batch, 1, kMixingTokens)) mix(*this, batch, rows, req, out);
  return out;
}

}  // namespace attnscan
