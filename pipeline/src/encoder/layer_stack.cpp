#include "encoder/layer_stack.hpp"

#include <cmath>
#include <limits>

#include "common/error.hpp"
#include "common/for_each_index.hpp"
#include "model/tensor_map.hpp"

namespace attnscan {

namespace {

namespace r = tensor_roles;

constexpr double kPi = 3.14159265358979323846;

// Python's `x / t` for a number x and a tensor t: reciprocal(t) * x (Tensor.__rdiv__), not ATen's x / t.
at::Tensor rdiv(double x, const at::Tensor& t) { return at::reciprocal(t) * x; }

// HF's default inverse frequencies: 1 / base ** (arange(0, dims, 2) / dims), in float32.
at::Tensor default_inv_freq(double base, int64_t dims) {
  return rdiv(1.0, at::pow(base, at::arange(0, dims, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) /
                                     static_cast<double>(dims)));
}

// YaRN's frequencies: interpolated below the correction range, extrapolated above it, a linear ramp between.
RotaryTable yarn_table(const RopeSpec& r) {
  const double base = r.theta, factor = r.factor;
  const int64_t dims = r.dims;
  const auto mscale = [](double scale, double m) { return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; };
  RotaryTable t;
  if (r.attention_factor >= 0) t.scale = r.attention_factor;
  else if (r.mscale != 0 && r.mscale_all_dim != 0) t.scale = mscale(factor, r.mscale) / mscale(factor, r.mscale_all_dim);
  else t.scale = mscale(factor, 1.0);
  const auto correction_dim = [&](double rotations) {
    return (static_cast<double>(dims) * std::log(static_cast<double>(r.original_max_positions) / (rotations * 2 * kPi))) /
           (2 * std::log(base));
  };
  double low = correction_dim(r.beta_fast), high = correction_dim(r.beta_slow);
  if (r.truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dims - 1));
  if (low == high) high += 0.001;  // as HF: no singularity
  const at::Tensor pos_freqs = at::pow(base, at::arange(0, dims, 2).to(at::kFloat) / static_cast<double>(dims));
  const at::Tensor extrapolation = rdiv(1.0, pos_freqs);
  const at::Tensor interpolation = rdiv(1.0, factor * pos_freqs);
  const at::Tensor ramp = at::clamp((at::arange(dims / 2, at::TensorOptions().dtype(at::kFloat)) - low) / (high - low), 0, 1);
  const at::Tensor extrapolation_factor = 1 - ramp;
  t.inv_freq = interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor;
  return t;
}

// Llama 3's frequencies: long wavelengths divided by factor, short ones kept, smoothed between.
at::Tensor llama3_inv_freq(const RopeSpec& r) {
  const at::Tensor inv_freq = default_inv_freq(r.theta, r.dims);
  const double old_context = static_cast<double>(r.original_max_positions);
  const double low_wavelen = old_context / r.low_freq_factor, high_wavelen = old_context / r.high_freq_factor;
  const at::Tensor wavelen = rdiv(2 * kPi, inv_freq);
  at::Tensor scaled = at::where(wavelen > low_wavelen, inv_freq / r.factor, inv_freq);
  const at::Tensor smooth = (rdiv(old_context, wavelen) - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
  const at::Tensor smoothed = (1 - smooth) * scaled / r.factor + smooth * scaled;
  const at::Tensor medium = at::logical_not(wavelen < high_wavelen) * at::logical_not(wavelen > low_wavelen);
  return at::where(medium, smoothed, scaled);
}

// x cos + rotate_half(x) sin on the rotated leading dimensions of x [..., S, head_dim]; the rest as it is.
at::Tensor rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t dims = cos.size(-1), half = dims / 2;
  const at::Tensor turned = x.size(-1) == dims ? x : x.narrow(-1, 0, dims);
  const at::Tensor halves = at::cat({-turned.narrow(-1, half, half), turned.narrow(-1, 0, half)}, -1);
  const at::Tensor rotated = turned * cos + halves * sin;
  return x.size(-1) == dims ? rotated : at::cat({rotated, x.narrow(-1, dims, x.size(-1) - dims)}, -1);
}

// 0 where query i sees key j, the lowest float elsewhere (exactly 0 after the softmax), [n, n].
at::Tensor key_mask(const KeyRange& keys, int64_t n, const at::Device& device) {
  const at::Tensor pos = at::arange(n, at::TensorOptions().dtype(at::kLong));
  const at::Tensor offset = pos.unsqueeze(0) - pos.unsqueeze(1);  // key - query
  at::Tensor visible = at::ones({n, n}, at::TensorOptions().dtype(at::kBool));
  if (keys.before >= 0) visible = visible.logical_and(offset >= -keys.before);
  if (keys.after >= 0) visible = visible.logical_and(offset <= keys.after);
  return at::zeros({n, n}).masked_fill_(visible.logical_not(), std::numeric_limits<float>::lowest()).to(device);
}

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, double eps) {
  return w * (x * at::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps));
}

}  // namespace

RotaryTable rotary_table(const RopeSpec& rope) {
  switch (rope.type) {
    case RopeType::None: return {};
    case RopeType::Default:
    case RopeType::Dynamic:  // the default frequencies up to max_position_embeddings, the longest sequence taken
      return {default_inv_freq(rope.theta, rope.dims), 1.0};
    case RopeType::Linear: return {default_inv_freq(rope.theta, rope.dims) / rope.factor, 1.0};
    case RopeType::Yarn: return yarn_table(rope);
    case RopeType::Llama3: return {llama3_inv_freq(rope), 1.0};
  }
  return {};
}

LayerStack::LayerStack(const LoadedModel& model, const EncoderOptions& options, const at::Device& device)
    : cfg_(model.config), opt_(options), device_(device) {
  at::NoGradGuard no_grad;
  const auto& w = *model.weights;
  auto dense = [&](const std::string& role) { return to_tensor(w.get(role)).to(device_); };
  auto optional = [&](const std::string& role) { return w.has(role) ? dense(role) : at::Tensor(); };
  auto norm_of = [&](const std::string& role) { return NormWeights{dense(role + ".weight"), optional(role + ".bias")}; };
  // A linear layer of the roles' weights stacked by rows, each bias or zeros where the model has none.
  auto linear = [&](std::vector<std::string> roles) {
    std::vector<at::Tensor> weights, biases;
    for (const auto& role : roles) {
      weights.push_back(mapped_tensor(w.get(role + ".weight")));
      biases.push_back(w.has(role + ".bias") ? to_tensor(w.get(role + ".bias")) : at::zeros({weights.back().size(0)}));
    }
    return make_linear(weights.size() == 1 ? weights[0] : at::cat(weights, 0), at::cat(biases, 0), opt_, device_);
  };
  tokens_ = dense(r::kTokens);
  if (cfg_.absolute_positions) positions_ = dense(r::kPositions);
  final_norm_ = norm_of("final_norm");
  layers_.resize(static_cast<std::size_t>(cfg_.num_layers));
  for_each_index(cfg_.num_layers, options.load_threads, [&](int64_t l) {
    at::NoGradGuard no_grad_here;  // the guard is per thread
    const LayerSpec& s = cfg_.layer_spec(l);
    if (s.norm.placement == NormPlacement::Post)
      throw ModelError("layer " + std::to_string(l) + ": post-norm layers run on the encoder path, not the layer stack");
    const auto role = [l](const std::string& part) { return r::layer(l, part); };
    StackLayer& L = layers_[static_cast<std::size_t>(l)];
    L.qkv = linear({role(r::kQ), role(r::kK), role(r::kV)});
    L.out = linear({role(r::kO)});
    const at::Tensor out_w = to_tensor(w.get(role(std::string(r::kO) + ".weight")));  // [hidden, heads * head_dim]
    L.value_out = out_w.view({cfg_.hidden_size, s.attention.heads, s.attention.head_dim}).permute({1, 2, 0}).contiguous().to(device_);
    if (s.attention.qk_norm) L.q_norm = dense(role(r::kQNorm)), L.k_norm = dense(role(r::kKNorm));
    L.attn_in = norm_of(role(r::kAttnIn));
    L.ffn_in = norm_of(role(r::kFfnIn));
    if (s.norm.placement == NormPlacement::Sandwich) L.attn_out = norm_of(role(r::kAttnOut)), L.ffn_out = norm_of(role(r::kFfnOut));
    L.up = linear({role(r::kUp)});
    if (s.ffn.kind == FfnKind::Gated) L.gate = linear({role(r::kGate)});
    L.down = linear({role(r::kDown)});
    L.rotary = rotary_table(s.attention.rope);
    if (L.rotary.inv_freq.defined()) L.rotary.inv_freq = L.rotary.inv_freq.to(device_);
    w.drop_pages();
  });
}

at::Tensor LayerStack::embed(const at::Tensor& ids, int64_t B, int64_t S) const {
  at::Tensor x = at::index_select(tokens_, 0, ids);
  // Gemma: times sqrt(hidden_size) as a float32 scalar, as Gemma3TextScaledWordEmbedding multiplies
  if (cfg_.embedding_scale > 0) x = x * at::scalar_tensor(cfg_.embedding_scale, x.options());
  if (positions_.defined())
    x = (x.view({B, S, -1}) + positions_.narrow(0, 0, S).unsqueeze(0)).view({B * S, -1});  // GPT-2: wte + wpe
  return x;
}

at::Tensor LayerStack::norm(const NormSpec& spec, const NormWeights& n, const at::Tensor& x) const {
  if (spec.kind == NormKind::Layer)
    return layer_norm(x.contiguous(), n.w, n.b.defined() ? n.b : at::zeros_like(n.w), spec.eps);
  return rms_norm(x, n.w, spec.eps);  // Gemma's 1 + w is in n.w
}

SelfAttention LayerStack::self_attention(const StackLayer& L, const AttentionSpec& a, const at::Tensor& qkv) const {
  const int64_t R = qkv.size(0), n = qkv.size(1), NH = a.heads, KV = a.kv_heads, D = a.head_dim;
  at::Tensor q = qkv.narrow(2, 0, NH * D).reshape({R, n, NH, D});
  at::Tensor k = qkv.narrow(2, NH * D, KV * D).reshape({R, n, KV, D});
  const at::Tensor v = qkv.narrow(2, (NH + KV) * D, KV * D).reshape({R, n, KV, D}).permute({0, 2, 1, 3});
  const double eps = cfg_.final_norm.eps;  // the config's rms_norm_eps, which the q/k norms share
  if (a.qk_norm) q = rms_norm(q, L.q_norm, eps), k = rms_norm(k, L.k_norm, eps);
  q = q.permute({0, 2, 1, 3});  // [R, heads, n, D]
  k = k.permute({0, 2, 1, 3});
  if (L.rotary.inv_freq.defined()) {
    const at::Tensor freqs = at::arange(n, at::TensorOptions().dtype(at::kFloat)).to(device_).unsqueeze(1) * L.rotary.inv_freq;
    const at::Tensor angles = at::cat({freqs, freqs}, -1);
    const at::Tensor cos = angles.cos() * L.rotary.scale, sin = angles.sin() * L.rotary.scale;
    q = rotate(q, cos, sin);
    k = rotate(k, cos, sin);
  }
  // each key/value head serves NH / KV query heads in a row, as repeat_kv
  const auto repeated = [&](const at::Tensor& t) {
    return KV == NH ? t : t.unsqueeze(2).expand({R, KV, NH / KV, n, D}).reshape({R, NH, n, D});
  };
  at::Tensor scores = at::matmul(q, repeated(k).transpose(-1, -2));
  if (a.scaling == ScoreScaling::DivideScores) scores = scores / std::sqrt(static_cast<double>(D));
  else scores = scores * (a.scale > 0 ? a.scale : std::pow(static_cast<double>(D), -0.5));
  if (!a.keys.is_all()) scores = scores + key_mask(a.keys, n, device_);
  return {at::softmax(scores, -1), repeated(v)};
}

at::Tensor LayerStack::attention(const StackLayer& L, const AttentionSpec& a, const at::Tensor& h,
                                 const TokenBatch& batch, const at::Tensor& probs, const at::Tensor& norms,
                                 bool attention_only) const {
  const int64_t B = batch.batch, S = batch.seq_len, NH = a.heads, D = a.head_dim;
  const at::Tensor qkv = L.qkv(h).view({B, S, -1});  // [B, S, (NH + 2 KV) D]
  at::Tensor ctx = attention_only ? at::Tensor() : at::zeros({B, NH, S, D}, qkv.options());
  // Each run of examples of equal length on its own n x n blocks: the operations of the example alone.
  for (int64_t b = 0, run = 0; b < B; b += run) {
    const int64_t n = batch.lengths[static_cast<std::size_t>(b)];
    for (run = 1; b + run < B && batch.lengths[static_cast<std::size_t>(b + run)] == n;) ++run;
    const SelfAttention sa = self_attention(L, a, qkv.narrow(0, b, run).narrow(1, 0, n));
    probs.narrow(0, b, run).narrow(2, 0, n).narrow(3, 0, n).copy_(sa.probs);
    if (norms.defined())  // [run, NH, n, D] x [NH, D, hidden] per head, then each row's norm; 0 on padding
      norms.narrow(0, b, run).narrow(2, 0, n).copy_(at::linalg_vector_norm(at::matmul(sa.v, L.value_out.unsqueeze(0)), 2, {-1}));
    if (!attention_only) ctx.narrow(0, b, run).narrow(2, 0, n).copy_(at::matmul(sa.probs, sa.v));
  }
  return attention_only ? ctx : ctx.permute({0, 2, 1, 3}).reshape({B * S, NH * D});
}

at::Tensor LayerStack::feed_forward(const StackLayer& L, const FfnSpec& f, const at::Tensor& x) const {
  if (f.kind == FfnKind::Gated) return L.down(activate(L.gate(x), f.activation) * L.up(x));
  return L.down(activate(L.up(x), f.activation));
}

at::Tensor LayerStack::finish_layer(const StackLayer& L, const LayerSpec& s, at::Tensor x, const at::Tensor& a) const {
  switch (s.norm.placement) {
    case NormPlacement::Pre: {
      x = x + a;
      return x + feed_forward(L, s.ffn, norm(s.norm, L.ffn_in, x));
    }
    case NormPlacement::Sandwich: {
      x = x + norm(s.norm, L.attn_out, a);
      return x + norm(s.norm, L.ffn_out, feed_forward(L, s.ffn, norm(s.norm, L.ffn_in, x)));
    }
    case NormPlacement::Parallel:  // as GPT-NeoX sums them: mlp_output + attn_output + hidden_states
      return feed_forward(L, s.ffn, norm(s.norm, L.ffn_in, x)) + a + x;
    case NormPlacement::Post: break;
  }
  throw Error("layer stack: post-norm layers are not run here");
}

EncoderOutput LayerStack::forward(const TokenBatch& batch, ForwardOutputs want) const {
  const int64_t B = batch.batch, S = batch.seq_len, L = cfg_.num_layers, H = cfg_.hidden_size;
  c10::InferenceMode guard;
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  const at::Tensor ids = at::from_blob(const_cast<int64_t*>(batch.input_ids.data()), {B * S}, i64).to(device_);
  at::Tensor x = embed(ids, B, S);
  int64_t heads = 0;
  for (const auto& s : cfg_.layer_specs) heads = std::max(heads, s.attention.heads);
  EncoderOutput out;
  out.batch = B;
  out.layers = L;
  out.heads = heads;
  out.seq_len = S;
  out.hidden_size = H;
  for (int64_t l = 0; l < L; ++l) out.key_ranges.push_back(cfg_.key_range(l));
  out.attention.assign(static_cast<std::size_t>(B * L * heads * S * S), 0.0f);
  const at::Tensor attn_out = at::from_blob(out.attention.data(), {B, L, heads, S, S});
  at::Tensor norms_out;
  if (want.value_norms) {
    out.value_norms.assign(static_cast<std::size_t>(B * L * heads * S), 0.0f);
    norms_out = at::from_blob(out.value_norms.data(), {B, L, heads, S});
  }
  at::Tensor hidden_out;
  if (want.hidden_states) {
    out.hidden_states.resize(static_cast<std::size_t>((L + 1) * B * S * H));
    hidden_out = at::from_blob(out.hidden_states.data(), {L + 1, B * S, H});
    hidden_out.select(0, 0).copy_(x);
  }
  for (int64_t l = 0; l < L; ++l) {
    const LayerSpec& s = cfg_.layer_spec(l);
    const StackLayer& layer = layers_[static_cast<std::size_t>(l)];
    const bool attention_only = !want.hidden_states && l + 1 == L;  // nothing after it reaches an attention
    const at::Tensor probs = attn_out.select(1, l).narrow(1, 0, s.attention.heads);
    const at::Tensor norms = want.value_norms ? norms_out.select(1, l).narrow(1, 0, s.attention.heads) : at::Tensor();
    const at::Tensor ctx = attention(layer, s.attention, norm(s.norm, layer.attn_in, x), batch, probs, norms, attention_only);
    if (attention_only) break;
    x = finish_layer(layer, s, std::move(x), layer.out(ctx));
    if (want.hidden_states) hidden_out.select(0, l + 1).copy_(x);
  }
  return out;
}

class StackSteps : public LayerSteps {
 public:
  StackSteps(const LayerStack& stack, int64_t n) : s_(stack), n_(n) {}
  int64_t layers() const override { return s_.cfg_.num_layers; }
  int64_t heads() const override { return s_.cfg_.layer_spec(0).attention.heads; }
  int64_t head_dim() const override { return s_.cfg_.layer_spec(0).attention.head_dim; }
  int64_t hidden() const override { return s_.cfg_.hidden_size; }
  at::Tensor embed(const RowGroup& rows) const override {
    return s_.embed(rows.ids, static_cast<int64_t>(rows.rows.size()), n_);
  }
  SelfAttention attention(int64_t li, const at::Tensor& x, int64_t R) const override {
    const LayerSpec& spec = s_.cfg_.layer_spec(li);
    const StackLayer& L = s_.layers_[static_cast<std::size_t>(li)];
    return s_.self_attention(L, spec.attention, L.qkv(s_.norm(spec.norm, L.attn_in, x)).view({R, n_, -1}));
  }
  at::Tensor finish_layer(int64_t li, const at::Tensor& ctx, at::Tensor x) const override {
    const StackLayer& L = s_.layers_[static_cast<std::size_t>(li)];
    const at::Tensor merged = ctx.permute({0, 2, 1, 3}).reshape({-1, ctx.size(1) * ctx.size(3)});
    return s_.finish_layer(L, s_.cfg_.layer_spec(li), std::move(x), L.out(merged));
  }
  at::Tensor final_output(const at::Tensor& x) const override { return s_.norm(s_.cfg_.final_norm, s_.final_norm_, x); }

 private:
  const LayerStack& s_;
  int64_t n_;
};

std::unique_ptr<LayerSteps> LayerStack::steps(int64_t n) const { return std::make_unique<StackSteps>(*this, n); }

}  // namespace attnscan
