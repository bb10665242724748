// One of the three translation units that run LibTorch (head_importance.cpp: gates, ablation and
// gradients; context_mixing.cpp: value zeroing and ALTI). Linear layers use OpenBLAS or oneDNN (mkldnn;
// engine.linear) with weights converted once at load time; everything else follows Hugging Face's eager BertModel operation by
// operation so attention matches it to float rounding.
#include "encoder/encoder.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "common/error.hpp"
#include "common/for_each_index.hpp"
#include "encoder/attention_kernel.hpp"
#include "encoder/encoder_impl.hpp"
#include "encoder/layer_stack.hpp"
#include "encoder/norm_kernel.hpp"
#include "encoder/platform.hpp"
#include "model/tensor_names.hpp"

namespace attnscan {

void set_compute_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (at::get_num_threads() != threads) at::set_num_threads(threads);
  // OpenBLAS keeps its own thread pool, which LibTorch's setting does not reach; left at its default
  // (all cores), two streams calling it at once wait for each other. Set only when it changes: setting
  // it restarts the pool that fork() stopped (the detector workers), and each restarted thread spins
  // ~0.1 s waiting for work, even in runs that never call the BLAS (the pool restarts on its first use).
  using SetThreads = void (*)(int);
  using GetThreads = int (*)();
  static const auto openblas_set_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  static const auto openblas_get_threads = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (openblas_set_threads && openblas_get_threads && openblas_get_threads() != threads) openblas_set_threads(threads);
}

TokenBatch TokenBatch::from_encodings(const std::vector<const Encoding*>& encodings, int32_t pad_id) {
  TokenBatch b;
  b.batch = static_cast<int64_t>(encodings.size());
  for (const auto* e : encodings) b.seq_len = std::max<int64_t>(b.seq_len, static_cast<int64_t>(e->size()));
  b.input_ids.assign(static_cast<std::size_t>(b.batch * b.seq_len), pad_id);
  b.token_type_ids.assign(b.input_ids.size(), 0);
  for (std::size_t i = 0; i < encodings.size(); ++i) {
    const auto& e = *encodings[i];
    b.lengths.push_back(static_cast<int64_t>(e.size()));
    for (std::size_t t = 0; t < e.size(); ++t) {
      b.input_ids[i * static_cast<std::size_t>(b.seq_len) + t] = e.ids[t];
      b.token_type_ids[i * static_cast<std::size_t>(b.seq_len) + t] = e.type_ids[t];
    }
  }
  return b;
}

namespace {

// Process-wide memory settings for inference, applied once before the first oneDNN use. glibc
// returns large freed blocks to the OS and page-faults them back on the next batch, which halves
// oneDNN throughput; keep them in the heap instead.
void tune_process_memory() {
  static std::once_flag once;
  std::call_once(once, [] {
    // oneDNN caches a primitive (with its buffers) per GEMM shape; with length-bucketed batches every
    // batch has a new shape and the default cache of 1024 grows memory by hundreds of MB.
    setenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "16", /*overwrite=*/0);
    // oneDNN marks every primitive it runs for Intel's profilers (ITT); on CPUs with PTWRITE inside a VM
    // each mark traps (6% of a bf16 run's samples in __itt_pt_write). Profilers can set it back.
    setenv("ONEDNN_ITT_TASK_LEVEL", "0", /*overwrite=*/0);
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024);
  });
}

}  // namespace

// v's values where the checkpoint maps them, in its dtype. The mapping is read-only; from_blob needs a
// non-const pointer, and nothing writes through the view.
static at::Tensor view_of(const TensorView& v) {
  at::ScalarType st = v.dtype == DType::F16 ? at::kHalf : v.dtype == DType::BF16 ? at::kBFloat16 : at::kFloat;
  return at::from_blob(const_cast<std::byte*>(v.data), v.shape, at::TensorOptions().dtype(st));
}

at::Tensor to_tensor(const TensorView& v) { return view_of(v).to(at::kFloat, /*non_blocking=*/false, /*copy=*/true); }

at::Tensor mapped_tensor(const TensorView& v) {
  if (v.dtype != DType::F32 || reinterpret_cast<std::uintptr_t>(v.data) % alignof(float) != 0) return to_tensor(v);
  return view_of(v);
}

namespace {

// Whether kernels::layer_norm_rows gives exactly at::layer_norm's values for rows of n here: checked once
// per (n, eps) on rows that take every path of its arithmetic for that n (varied rows, one far from zero,
// one with an outlier; varied gamma and beta), so that under a LibTorch that computes otherwise (another
// build, another CPU capability) ATen's own kernel stays.
bool layer_norm_kernel_agrees(int64_t n, double eps) {
  static std::mutex mutex;
  static std::map<std::pair<int64_t, double>, bool> checked;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(n, eps);
  if (auto it = checked.find(key); it != checked.end()) return it->second;
  bool agrees = kernels::layer_norm_rows_supported();
  if (agrees) {
    const auto wave = [](int64_t count, double step) { return at::sin(at::arange(count, at::kFloat) * step); };
    at::Tensor x = (wave(37 * n, 0.7311) * 3).view({37, n}), w = 1 + wave(n, 1.37) * 0.2, b = wave(n, 2.9) * 0.1;
    x[1] = x[1] * 0.01 + 100;
    x[2][n / 2] = 300;
    const at::Tensor want = at::layer_norm(x, {n}, w, b, eps);
    at::Tensor got = at::empty_like(x);
    kernels::layer_norm_rows(x.data_ptr<float>(), got.data_ptr<float>(), 37, n, w.data_ptr<float>(), b.data_ptr<float>(),
                             static_cast<float>(eps));
    agrees = std::memcmp(want.data_ptr<float>(), got.data_ptr<float>(), static_cast<std::size_t>(37 * n) * sizeof(float)) == 0;
  }
  return checked[key] = agrees;
}

}  // namespace

at::Tensor layer_norm(at::Tensor x, const at::Tensor& w, const at::Tensor& b, double eps) {
  const int64_t n = x.size(-1);
  const auto plain_fp32 = [](const at::Tensor& t) {
    return t.defined() && t.is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous() && !t.requires_grad();
  };
  if (n < 1 || !plain_fp32(x) || !plain_fp32(w) || !plain_fp32(b) || w.numel() != n || b.numel() != n ||
      !layer_norm_kernel_agrees(n, eps))
    return at::layer_norm(x, {n}, w, b, eps);
  const bool sole_owner = x.use_count() == 1 && x.storage().use_count() == 1;
  at::Tensor y = sole_owner ? x : at::empty_like(x);
  const float *in = x.data_ptr<float>(), *gamma = w.data_ptr<float>(), *beta = b.data_ptr<float>();
  float* out = y.data_ptr<float>();
  at::parallel_for(0, x.numel() / n, 64, [&](int64_t first, int64_t last) {
    kernels::layer_norm_rows(in + first * n, out + first * n, last - first, n, gamma, beta, static_cast<float>(eps));
  });
  return y;
}

Linear make_linear(const at::Tensor& w, at::Tensor b, const EncoderOptions& opt, const at::Device& dev) {
  Linear l;
  if (opt.device.kind == DeviceSpec::Kind::Cpu && resolve_linear_backend(opt) == LinearBackend::OneDnn) {
    const at::Tensor wc = w.contiguous(), bc = b.contiguous();
    l.packed = std::make_shared<const kernels::PackedLinear>(wc.data_ptr<float>(), bc.data_ptr<float>(), wc.size(0),
                                                             wc.size(1), opt.precision == Precision::BF16);
    l.bias = bc;
  } else {
    l.weight = w.to(dev, at::kFloat, /*non_blocking=*/false, /*copy=*/true).contiguous();
    l.bias = b.to(dev);
  }
  return l;
}

at::Tensor activate(const at::Tensor& x, Activation a) {
  switch (a) {
    case Activation::GeluErf: return at::gelu(x);
    case Activation::GeluTanh: return at::gelu(x, "tanh");
    case Activation::Relu: return at::relu(x);
    case Activation::Silu: return at::silu(x);
  }
  return x;
}

namespace {

kernels::Epilogue epilogue_of(Activation a) {
  switch (a) {
    case Activation::GeluErf: return kernels::Epilogue::GeluErf;
    case Activation::GeluTanh: return kernels::Epilogue::GeluTanh;
    case Activation::Relu: return kernels::Epilogue::Relu;
    case Activation::Silu: break;  // no epilogue: Linear::activated applies it after the product
  }
  return kernels::Epilogue::None;
}

// x as the dense fp32 rows a packed layer reads.
at::Tensor packed_input(const at::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.scalar_type() == at::kFloat, "a linear layer takes [tokens, features] in fp32");
  return x.contiguous();
}

// A packed layer's output for `rows` input rows, its padding rows included.
at::Tensor packed_output(const kernels::PackedLinear& p, int64_t rows, const at::TensorOptions& options) {
  return at::empty({p.rows_computed(rows), p.out_features()}, options);
}

// Whether p can add its output to `residual` where it lies: handed over (no other handle to it or its
// storage), dense fp32 rows of p's width, with room after them for the padding rows p computes (bf16
// rounds the rows up; the outputs of bf16 layers have that room, so their sums go on in place).
bool sums_in_place(const kernels::PackedLinear& p, const at::Tensor& residual) {
  if (!residual.defined() || residual.requires_grad() || residual.use_count() != 1 || residual.storage().use_count() != 1 ||
      residual.scalar_type() != at::kFloat || !residual.is_contiguous() || residual.dim() != 2 ||
      residual.size(1) != p.out_features())
    return false;
  const auto needed = static_cast<std::size_t>(residual.storage_offset() + p.rows_computed(residual.size(0)) * p.out_features());
  return residual.storage().nbytes() >= needed * sizeof(float);
}

// p's output for `rows` rows plus residual, as write(out) adds it to out's rows: into residual itself where
// sums_in_place allows, else into a copy of it.
template <class Write>
at::Tensor summed(const kernels::PackedLinear& p, int64_t rows, at::Tensor residual, const Write& write) {
  if (residual.size(0) == rows && sums_in_place(p, residual)) {
    write(residual.data_ptr<float>());
    return residual;
  }
  at::Tensor y = packed_output(p, rows, residual.options());
  y.narrow(0, 0, rows).copy_(residual);
  write(y.data_ptr<float>());
  return y.narrow(0, 0, rows);  // the leading rows: still contiguous
}

}  // namespace

at::Tensor Linear::activated(const at::Tensor& x, Activation a) const {
  return a == Activation::Silu ? activate(fused(x, kernels::Epilogue::None), a) : fused(x, epilogue_of(a));
}

at::Tensor Linear::plus(const at::Tensor& x, at::Tensor residual) const {
  return fused(x, kernels::Epilogue::AddResidual, std::move(residual));
}

at::Tensor Linear::fused(const at::Tensor& x, kernels::Epilogue e, at::Tensor residual) const {
  if (!packed || x.requires_grad() || (residual.defined() && residual.requires_grad())) {
    const at::Tensor y = at::linear(x, packed ? dense_weight() : weight, bias);
    switch (e) {
      case kernels::Epilogue::None: return y;
      case kernels::Epilogue::GeluErf: return activate(y, Activation::GeluErf);
      case kernels::Epilogue::GeluTanh: return activate(y, Activation::GeluTanh);
      case kernels::Epilogue::Relu: return activate(y, Activation::Relu);
      case kernels::Epilogue::AddResidual: return y + residual;
    }
  }
  const at::Tensor in = packed_input(x);
  const int64_t rows = in.size(0);
  const auto write = [&](float* out) { packed->apply(in.data_ptr<float>(), rows, out, e); };
  if (e == kernels::Epilogue::AddResidual) return summed(*packed, rows, std::move(residual), write);
  at::Tensor y = packed_output(*packed, rows, in.options());
  write(y.data_ptr<float>());
  return y.narrow(0, 0, rows);  // the leading rows: still contiguous
}

bool bf16_hand_off(const Linear& first, const Linear& second, const at::Tensor& x) {
  return first.packed && second.packed && first.packed->bf16() && second.packed->bf16() && !x.requires_grad();
}

at::Tensor bf16_hidden(const Linear& inter, const at::Tensor& x, Activation a) {
  const at::Tensor in = packed_input(x);
  const at::Tensor hidden = packed_output(*inter.packed, in.size(0), in.options().dtype(at::kBFloat16));
  inter.packed->apply_to_bf16(in.data_ptr<float>(), in.size(0), reinterpret_cast<uint16_t*>(hidden.data_ptr()), epilogue_of(a));
  return hidden;
}

at::Tensor Linear::plus_from_bf16(const at::Tensor& hidden, at::Tensor residual) const {
  const int64_t rows = residual.size(0);
  const auto* bits = reinterpret_cast<const uint16_t*>(hidden.data_ptr());
  return summed(*packed, rows, std::move(residual),
                [&](float* out) { packed->apply_from_bf16(bits, rows, out, kernels::Epilogue::AddResidual); });
}

at::Tensor Linear::dense_weight() const {
  std::vector<float> w = packed->unpacked_weight();
  return at::from_blob(w.data(), {packed->out_features(), packed->in_features()}).clone();
}

at::Tensor relative_position_bucket(int64_t S, int64_t num_buckets, int64_t max_distance) {
  auto pos = at::arange(S, at::TensorOptions().dtype(at::kLong));
  auto n = -(pos.unsqueeze(0) - pos.unsqueeze(1));  // -(memory - context)
  num_buckets /= 2;
  auto ret = (n < 0).to(at::kLong) * num_buckets;
  n = n.abs();
  const int64_t max_exact = num_buckets / 2;
  auto large = max_exact + (at::log(n.to(at::kFloat) / static_cast<double>(max_exact)) /
                            std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)) *
                            static_cast<double>(num_buckets - max_exact))
                               .to(at::kLong);
  large = at::min(large, at::full_like(large, num_buckets - 1));
  return ret + at::where(n < max_exact, n, large);
}

at::Tensor disentangled_position_index(int64_t S, const ModelConfig::Disentangled& d) {
  auto pos = at::arange(S, at::TensorOptions().dtype(at::kLong));
  auto rel = pos.unsqueeze(1) - pos.unsqueeze(0);  // query - key
  if (d.position_buckets > 0) {  // make_log_bucket_position, in float32 as its reference code
    const int64_t mid = d.position_buckets / 2;
    auto abs_pos = at::where(at::logical_and(rel < mid, rel > -mid), at::full_like(rel, mid - 1), rel.abs());
    auto per_bucket = at::log(at::scalar_tensor(static_cast<double>(d.max_relative_positions - 1) / static_cast<double>(mid),
                                                at::TensorOptions().dtype(at::kFloat)));
    auto log_pos = at::ceil(at::log(abs_pos.to(at::kFloat) / static_cast<double>(mid)) / per_bucket *
                            static_cast<double>(mid - 1)) + static_cast<double>(mid);
    rel = at::where(abs_pos <= mid, rel.to(at::kFloat), log_pos * at::sign(rel).to(at::kFloat)).to(at::kLong);
  }
  return at::clamp(rel + d.span(), 0, 2 * d.span() - 1);
}

Rotation rotary_positions(int64_t S, int64_t head_dim, double theta) {
  auto f32 = at::TensorOptions().dtype(at::kFloat);
  auto inv_freq = 1.0 / at::pow(theta, at::arange(0, head_dim, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) /
                                           static_cast<double>(head_dim));
  auto freqs = at::matmul(at::arange(S, f32).unsqueeze(1), inv_freq.unsqueeze(0));  // [S, head_dim / 2]
  auto angles = at::cat({freqs, freqs}, -1);
  return {angles.cos(), angles.sin()};
}

RelativePositions RelativePositions::first(int64_t m) const {
  RelativePositions r;
  auto block = [m](const at::Tensor& t) { return t.defined() ? t.narrow(-2, 0, m).narrow(-1, 0, m) : t; };
  auto rows = [m](const Rotation& t) { return t.cos.defined() ? Rotation{t.cos.narrow(0, 0, m), t.sin.narrow(0, 0, m)} : t; };
  r.bias = block(bias);
  r.index = block(index);
  r.window = block(window);
  r.global = rows(global);
  r.local = rows(local);
  return r;
}

void throw_libtorch_error(const c10::Error& e, const std::string& doing) {
  std::string message = e.what_without_backtrace();
  if (auto nl = message.find('\n'); nl != std::string::npos) message.resize(nl);
  throw Error("LibTorch failed " + doing + ": " + message);
}

Transformer::Transformer(const LoadedModel& model, const EncoderOptions& options, const TaskHead* head)
    : impl_(new Impl) {
  tune_process_memory();
  auto& m = *impl_;
  m.cfg = model.config;
  m.opt = options;
  if (options.device.kind == DeviceSpec::Kind::Cuda) {
    if (!at::hasCUDA())
      throw Error("device " + options.device.str() + " requested but this LibTorch build has no CUDA support");
    m.device = at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(options.device.index));
  }
  if (options.device.kind == DeviceSpec::Kind::Cpu) require_precision(options.precision, "precision");
  if (options.device.kind == DeviceSpec::Kind::Cpu && options.linear == LinearBackend::OpenBlas &&
      resolve_linear_backend(options) != LinearBackend::OpenBlas)
    throw Error(options.precision == Precision::BF16
                    ? "engine.linear openblas computes fp32 only; bf16 linear layers need onednn (or auto)"
                    : "engine.linear openblas: OpenBLAS is not the BLAS loaded here (" + compute_platform().blas +
                          "); use auto or onednn");
  if (options.precision == Precision::BF16 && options.device.kind == DeviceSpec::Kind::Cpu &&
      !at::globalContext().userEnabledMkldnn())
    throw Error("precision bf16 needs oneDNN, which is disabled in this LibTorch");
  try {
    m.load(model);
    if (head) m.load_head(*head);
  } catch (const c10::Error& e) {
    throw_libtorch_error(e, std::string("preparing the weights (") + precision_name(options.precision) + ")");
  }
}

void Transformer::Impl::load(const LoadedModel& model) {
  auto& m = *this;
  const auto& options = opt;
  set_compute_threads(options.threads);
  if (cfg.described_by_layers()) {
    stack = std::make_shared<const LayerStack>(model, options, device);
    return;
  }
  // Not InferenceMode: its tensors could not take part in gradient importance's backward pass.
  at::NoGradGuard no_grad;
  const auto& w = *model.weights;
  auto dense = [&](const std::string& name) { return to_tensor(w.get(name)).to(m.device); };
  namespace e = embedding_tensor;
  namespace l = layer_tensor;
  const auto& c = m.cfg;
  const auto& d = c.disentangled;
  if (c.absolute_positions) m.position = dense(e::kPosition);
  if (c.token_types) m.token_type = dense(e::kTokenType);
  // A bias the model has, else zeros (ModernBERT's attention_bias, mlp_bias, norm_bias false).
  auto bias_or_zeros = [&](const std::string& name, bool present, int64_t size) {
    return present ? to_tensor(w.get(name)) : at::zeros({size});
  };
  m.emb_ln_w = dense(e::kLnW);
  m.emb_ln_b = bias_or_zeros(e::kLnB, c.norm_bias, m.emb_ln_w.size(0)).to(m.device);
  if (c.pre_norm) {
    m.final_norm_w = dense(kFinalNormW);
    m.final_norm_b = bias_or_zeros(kFinalNormB, c.norm_bias, c.hidden_size).to(m.device);
  }
  if (c.project_embeddings) {
    const at::Tensor project_w = to_tensor(w.get(e::kProjectW));
    const at::Tensor project_b = c.norm_after_projection ? at::zeros({c.hidden_size})  // DeBERTa: no bias
                                                         : to_tensor(w.get(e::kProjectB));
    m.embed_project = make_linear(project_w, project_b, options, m.device);
  }
  if (c.relative_attention_buckets > 0) m.relative_bias = dense(kRelativeAttentionBias);
  at::Tensor rel_embeddings;  // DeBERTa: [2 * span, hidden], normalised where norm_rel_ebd says so
  if (d.relative) {
    rel_embeddings = to_tensor(w.get(kRelEmbeddings));
    if (d.norm_rel_embeddings)
      rel_embeddings =
          layer_norm(std::move(rel_embeddings), to_tensor(w.get(kRelNormW)), to_tensor(w.get(kRelNormB)), c.layer_norm_eps);
  }
  // One layer's weights, copied or packed.
  auto build_layer = [&](int64_t i) {
    auto get = [&](const char* suffix) { return to_tensor(w.get(layer_tensor_name(i, suffix))); };
    auto read = [&](const char* suffix) { return mapped_tensor(w.get(layer_tensor_name(i, suffix))); };  // at once
    // The relative-position embeddings through one projection, as [heads, head_dim, 2 * span].
    auto positions_through = [&](const char* weight, const char* bias) {
      return at::linear(rel_embeddings, read(weight), read(bias))
          .view({2 * d.span(), c.num_heads, c.head_dim()})
          .permute({1, 2, 0})
          .contiguous()
          .to(m.device);
    };
    auto bias = [&](const char* suffix, bool present, int64_t size) {
      return bias_or_zeros(layer_tensor_name(i, suffix), present, size);
    };
    const int64_t H = c.hidden_size;
    Layer layer;
    layer.local = c.is_local(i);
    if (d.adds_c2p())
      layer.pos_key = d.share_att_key ? positions_through(l::kKeyW, l::kKeyB) : positions_through(l::kPosKeyW, l::kPosKeyB);
    if (d.adds_p2c())
      layer.pos_query =
          d.share_att_key ? positions_through(l::kQueryW, l::kQueryB) : positions_through(l::kPosQueryW, l::kPosQueryB);
    // Query, key and value as one [3H, H] product: one larger GEMM instead of three small ones.
    const bool qb = c.attention_bias, fb = c.ffn_bias;
    if (c.fused_qkv) {
      layer.qkv = make_linear(read(l::kQkvW), bias(l::kQkvB, qb, 3 * H), options, m.device);
    } else {  // q, k and v weights side by side, [3H, H], for one packing
      const at::Tensor qkv_w = at::cat({read(l::kQueryW), read(l::kKeyW), read(l::kValueW)}, 0);
      layer.qkv = make_linear(qkv_w, at::cat({bias(l::kQueryB, qb, H), bias(l::kKeyB, qb, H), bias(l::kValueB, qb, H)}, 0),
                              options, m.device);
    }
    const at::Tensor attn_out_w = read(l::kAttnOutW);  // [hidden out, heads * head_dim in]
    layer.attn_out = make_linear(attn_out_w, bias(l::kAttnOutB, qb, H), options, m.device);
    layer.value_out =
        attn_out_w.view({H, c.num_heads, c.head_dim()}).permute({1, 2, 0}).clone(at::MemoryFormat::Contiguous).to(m.device);
    const int64_t inter_out = c.gated_ffn ? 2 * c.intermediate_size : c.intermediate_size;
    layer.inter = make_linear(read(l::kInterW), bias(l::kInterB, fb, inter_out), options, m.device);
    layer.out = make_linear(read(l::kOutW), bias(l::kOutB, fb, H), options, m.device);
    if (!c.pre_norm || i > 0) {  // pre-norm: the first layer reads the embeddings as they are
      layer.ln1_w = get(l::kAttnLnW).to(m.device);
      layer.ln1_b = bias(l::kAttnLnB, c.norm_bias, H).to(m.device);
    }
    layer.ln2_w = get(l::kOutLnW).to(m.device);
    layer.ln2_b = bias(l::kOutLnB, c.norm_bias, H).to(m.device);
    return layer;
  };
  // The word embeddings (task 0, the largest table) and each layer (task i + 1) are copied or packed side
  // by side on the run's cores, most of its start-up: each task reads only its own tensors and those above.
  m.layers.resize(static_cast<std::size_t>(c.stored_layers()));
  for_each_index(c.stored_layers() + 1, options.load_threads, [&](int64_t task) {
    at::NoGradGuard no_grad_here;  // the guard is per thread
    if (task == 0) {
      m.word = dense(e::kWord);
      return;
    }
    m.layers[static_cast<std::size_t>(task - 1)] = build_layer(task - 1);
    // Everything read so far is copied or packed: its pages leave the footprint (the mapping stays valid; a
    // task reading meanwhile maps its pages in again), so a run holds the weights once, not twice.
    w.drop_pages();
  });
}

void Transformer::Impl::load_head(const TaskHead& h) {
  at::NoGradGuard no_grad;
  auto dense = [&](const TensorView* v) { return v ? to_tensor(*v).to(device) : at::Tensor(); };
  head = HeadTensors{h, dense(h.dense_w), dense(h.dense_b), dense(h.norm_w), dense(h.norm_b), dense(h.out_w),
                     dense(h.out_b)};
}

RelativePositions Transformer::Impl::relative_positions(int64_t S) const {
  RelativePositions r;
  if (relative_bias.defined()) {  // MPNet: [heads, S, S], added to every layer's scores
    auto buckets = relative_position_bucket(S, cfg.relative_attention_buckets, cfg.relative_attention_max_distance);
    r.bias = at::embedding(relative_bias, buckets.to(relative_bias.device())).permute({2, 0, 1}).contiguous();
  }
  if (cfg.disentangled.relative) r.index = disentangled_position_index(S, cfg.disentangled).to(device);
  if (cfg.global_theta > 0) {
    auto on_device = [&](Rotation t) { return Rotation{t.cos.to(device), t.sin.to(device)}; };
    r.global = on_device(rotary_positions(S, cfg.head_dim(), cfg.global_theta));
    if (cfg.has_local_layers()) r.local = on_device(rotary_positions(S, cfg.head_dim(), cfg.local_theta));
  }
  if (cfg.has_local_layers()) {
    auto pos = at::arange(S, at::TensorOptions().dtype(at::kLong));
    r.window = ((pos.unsqueeze(1) - pos.unsqueeze(0)).abs() <= cfg.local_window / 2).to(device);
  }
  return r;
}

namespace {

// The encoder families' forward, step by step, for rows of n tokens (their relative positions made once).
class EncoderSteps : public LayerSteps {
 public:
  EncoderSteps(const Transformer::Impl& m, int64_t n) : m_(m), n_(n), rel_(m.relative_positions(n)) {}
  int64_t layers() const override { return m_.cfg.num_layers; }
  int64_t heads() const override { return m_.cfg.num_heads; }
  int64_t head_dim() const override { return m_.cfg.head_dim(); }
  int64_t hidden() const override { return m_.cfg.hidden_size; }
  at::Tensor embed(const RowGroup& rows) const override {
    return m_.embed(rows.ids, rows.types, static_cast<int64_t>(rows.rows.size()), n_);
  }
  SelfAttention attention(int64_t li, const at::Tensor& x, int64_t R) const override {
    return m_.self_attention(m_.layer(li), x, R, n_, rel_);
  }
  at::Tensor finish_layer(int64_t li, const at::Tensor& ctx, at::Tensor x) const override {
    return m_.finish_layer(m_.layer(li), m_.merge_heads(ctx), std::move(x));
  }
  at::Tensor final_output(const at::Tensor& x) const override { return m_.final_output(x); }

 private:
  const Transformer::Impl& m_;
  int64_t n_;
  RelativePositions rel_;
};

}  // namespace

std::unique_ptr<LayerSteps> Transformer::Impl::steps(int64_t n) const {
  if (stack) return stack->steps(n);
  return std::make_unique<EncoderSteps>(*this, n);
}

Transformer::~Transformer() = default;

const ModelConfig& Transformer::config() const { return impl_->cfg; }
const EncoderOptions& Transformer::options() const { return impl_->opt; }

double Transformer::flops(int64_t batch, int64_t seq_len, bool hidden_states) const {
  const auto& c = impl_->cfg;
  const double T = static_cast<double>(batch * seq_len), H = static_cast<double>(c.hidden_size);
  const double I = static_cast<double>(c.intermediate_size), S = static_cast<double>(seq_len);
  const double qkv = 2.0 * T * 3.0 * H * H, scores = 2.0 * T * S * H;      // QKV; QK^T
  const double ffn = (c.gated_ffn ? 3.0 : 2.0) * H * I;                    // GeGLU: [a | g] is 2I wide
  const double rest = 2.0 * T * (H * H + ffn) + 2.0 * T * S * H;           // attention output, FFN; PV
  const double layers = static_cast<double>(c.num_layers);
  // Without hidden states the last layer stops at its attention probabilities (see Impl::forward).
  return layers * (qkv + scores) + (hidden_states ? layers : layers - 1.0) * rest;
}

EncoderOutput Transformer::forward(const TokenBatch& batch, ForwardOutputs want) const {
  try {
    return impl_->forward(batch, want);
  } catch (const c10::Error& e) {
    throw_libtorch_error(e, "in the forward pass (batch of " + std::to_string(batch.batch) + " x " +
                                std::to_string(batch.seq_len) + " tokens, " + precision_name(impl_->opt.precision) +
                                ")");
  }
}

void Transformer::Impl::check_batch(const TokenBatch& batch) const {
  const auto& c = cfg;
  if (batch.batch <= 0 || batch.seq_len <= 0) throw Error("forward: empty batch");
  if (batch.seq_len > c.max_tokens())
    throw Error("forward: sequence length " + std::to_string(batch.seq_len) + " exceeds the model's maximum " +
                std::to_string(c.max_tokens()));
  for (auto id : batch.input_ids)
    if (id < 0 || id >= c.vocab_size) throw Error("forward: token id " + std::to_string(id) + " outside the vocabulary");
  for (auto t : batch.token_type_ids)  // families without token type embeddings ignore them, as HF does
    if (c.token_types && (t < 0 || t >= c.type_vocab_size))
      throw Error("forward: token type " + std::to_string(t) + " out of range");
}

bool Transformer::Impl::summed_in_one_pass(const at::Tensor& ids, const at::Tensor& types) const {
  const auto plain = [](const at::Tensor& t, at::ScalarType type) {
    return !t.defined() || (t.is_cpu() && t.scalar_type() == type && t.is_contiguous() && !t.requires_grad());
  };
  const auto table = [this, &plain](const at::Tensor& t) {
    return plain(t, at::kFloat) && (!t.defined() || (t.dim() == 2 && t.size(1) == cfg.embedding_size));
  };
  return table(word) && table(position) && table(token_type) && plain(ids, at::kLong) && plain(types, at::kLong);
}

at::Tensor Transformer::Impl::summed_embeddings(const at::Tensor& ids, const at::Tensor& types, int64_t B,
                                                int64_t S) const {
  const auto& c = cfg;
  const int64_t E = c.embedding_size;
  TORCH_CHECK(ids.numel() == B * S && (!c.token_types || types.numel() == B * S), "embeddings: ", B, " x ", S, " ids");
  TORCH_CHECK(!c.absolute_positions || c.position_offset + S <= position.size(0), "embeddings: ", S, " positions");
  at::Tensor x = at::empty({B * S, E}, word.options());
  const int64_t* id = ids.data_ptr<int64_t>();
  const int64_t* type = c.token_types ? types.data_ptr<int64_t>() : nullptr;
  const float* words = word.data_ptr<float>();
  const float* positions = c.absolute_positions ? position.data_ptr<float>() + c.position_offset * E : nullptr;
  const float* types_table = c.token_types ? token_type.data_ptr<float>() : nullptr;
  const int64_t vocabulary = word.size(0), type_count = c.token_types ? token_type.size(0) : 0;
  float* rows = x.data_ptr<float>();
  for (int64_t t = 0; t < B * S; ++t) {
    TORCH_CHECK(id[t] >= 0 && id[t] < vocabulary, "embeddings: token id ", id[t], " out of range");
    TORCH_CHECK(!type || (type[t] >= 0 && type[t] < type_count), "embeddings: token type ", type[t], " out of range");
    float* out = rows + t * E;
    std::copy(words + id[t] * E, words + (id[t] + 1) * E, out);
    if (positions) {
      const float* p = positions + (t % S) * E;
      for (int64_t e = 0; e < E; ++e) out[e] += p[e];
    }
    if (type) {
      const float* y = types_table + type[t] * E;
      for (int64_t e = 0; e < E; ++e) out[e] += y[e];
    }
  }
  return x;
}

at::Tensor Transformer::Impl::embed(const at::Tensor& ids, const at::Tensor& types, int64_t B, int64_t S) const {
  const auto& c = cfg;
  const int64_t E = c.embedding_size;
  // Real tokens get positions offset .. offset + n - 1 (RoBERTa-style ids count only non-padding
  // tokens, which in a right-padded row are exactly the leading n).
  at::Tensor x;
  if (summed_in_one_pass(ids, types)) {
    x = summed_embeddings(ids, types, B, S);
  } else {
    x = at::index_select(word, 0, ids).view({B, S, E});
    if (c.absolute_positions) x = x + position.narrow(0, c.position_offset, S).unsqueeze(0);
    if (c.token_types) x = x + at::index_select(token_type, 0, types).view({B, S, E});
    x = x.view({B * S, E});
  }
  if (c.norm_after_projection) {  // DeBERTa: project, then normalise over hidden_size
    if (embed_project) x = (*embed_project)(x);
    return layer_norm(std::move(x), emb_ln_w, emb_ln_b, c.layer_norm_eps);
  }
  x = layer_norm(std::move(x), emb_ln_w, emb_ln_b, c.layer_norm_eps);
  if (embed_project) x = (*embed_project)(x);
  return x;
}

namespace {

// x cos + rotate_half(x) sin, rotate_half(x) = [-x2, x1] for x = [x1, x2] along the last dimension.
at::Tensor rotate(const at::Tensor& x, const Rotation& r) {
  const int64_t half = x.size(-1) / 2;
  auto halves = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * r.cos + halves * r.sin;
}

}  // namespace

at::Tensor Transformer::Impl::attention_scores(const Layer& L, const at::Tensor& q, const at::Tensor& k,
                                               const RelativePositions& rel) const {
  const auto& d = cfg.disentangled;
  const auto D = static_cast<double>(cfg.head_dim());
  if (!d.on) {
    at::Tensor qr = q, kr = k;
    if (const Rotation& turn = L.local ? rel.local : rel.global; turn.cos.defined()) {  // rotary positions
      qr = rotate(q, turn);
      kr = rotate(k.transpose(-1, -2), turn).transpose(-1, -2);
    }
    at::Tensor scores;
    switch (cfg.score_scaling) {  // in the order the family's reference code computes it (the rounding differs)
      case ModelConfig::ScoreScaling::DivideScores: scores = at::matmul(qr, kr).div_(std::sqrt(D)); break;
      case ModelConfig::ScoreScaling::DivideQueries: scores = at::matmul(qr / std::sqrt(D), kr); break;
      case ModelConfig::ScoreScaling::MultiplyScores: scores = at::matmul(qr, kr).mul_(std::pow(D, -0.5)); break;
    }
    if (rel.bias.defined()) scores = scores + rel.bias;
    // A local layer: keys outside the window get the lowest float, so exactly 0 after the softmax
    if (L.local && rel.window.defined())
      scores.masked_fill_(rel.window.logical_not(), std::numeric_limits<float>::lowest());
    return scores;
  }
  // DeBERTa's DisentangledSelfAttention: a float32 scale sqrt(head_dim * terms), the keys divided by it
  // first; then c2p (query . position key) and p2c (key . position query), each divided by it.
  const double scale = std::sqrt(static_cast<float>(D * static_cast<double>(d.terms())));
  at::Tensor scores = at::matmul(q, k / scale);
  auto shape = q.sizes().vec();  // [..., n, n]
  shape.back() = q.size(-2);
  at::Tensor position;
  if (d.adds_c2p()) position = at::gather(at::matmul(q, L.pos_key), -1, rel.index.expand(shape)) / scale;
  if (d.adds_p2c()) {  // bucket(j - i) = -bucket(i - j): key j's row of query i is index[i][j]
    auto p2c = at::gather(at::matmul(k.transpose(-1, -2), L.pos_query), -1, rel.index.t().expand(shape)).transpose(-1, -2);
    position = position.defined() ? position + p2c / scale : p2c / scale;
  }
  return position.defined() ? scores + position : scores;
}

at::Tensor Transformer::Impl::attention_input(const Layer& L, const at::Tensor& x) const {
  if (!cfg.pre_norm || !L.ln1_w.defined()) return x;
  return layer_norm(x, L.ln1_w, L.ln1_b, cfg.layer_norm_eps);
}

at::Tensor Transformer::Impl::final_output(const at::Tensor& x) const {
  if (!final_norm_w.defined()) return x;
  return layer_norm(x, final_norm_w, final_norm_b, cfg.layer_norm_eps);
}

SelfAttention Transformer::Impl::self_attention(const Layer& L, const at::Tensor& x, int64_t R, int64_t n,
                                                const RelativePositions& rel) const {
  const int64_t NH = cfg.num_heads, D = cfg.head_dim();
  auto qkv = L.qkv(attention_input(L, x)).view({R, n, 3, NH, D});
  auto q = qkv.select(2, 0).permute({0, 2, 1, 3});
  auto k = qkv.select(2, 1).permute({0, 2, 3, 1});
  return {at::softmax(attention_scores(L, q, k, rel), -1), qkv.select(2, 2).permute({0, 2, 1, 3})};
}

bool Transformer::Impl::has_plain_attention(const Layer& L, const RelativePositions& rel) const {
  const bool rotary = (L.local ? rel.local : rel.global).cos.defined();
  return device.is_cpu() && !cfg.disentangled.on && !rotary && !(L.local && rel.window.defined());
}

// An n x n block written at the top left of S x S: the rest of it set to 0 (padded keys and queries).
static void zero_padding(float* block, int64_t n, int64_t S) {
  if (n == S) return;
  for (int64_t q = 0; q < n; ++q) std::fill(block + q * S + n, block + (q + 1) * S, 0.0f);
  std::fill(block + n * S, block + S * S, 0.0f);
}

at::Tensor Transformer::Impl::plain_attention(const at::Tensor& qkv, const TokenBatch& batch, int64_t li,
                                              EncoderOutput& out, const RelativePositions& rel, bool attention_only) const {
  const int64_t B = batch.batch, S = batch.seq_len, H = cfg.hidden_size, NH = cfg.num_heads, D = cfg.head_dim();
  const at::Tensor rows = qkv.contiguous();
  const at::Tensor bias = rel.bias.defined() ? rel.bias.contiguous() : at::Tensor();  // [heads, S, S]
  // Rows past an example's length stay 0 (the next layer's padded rows must be finite); the heads write the rest.
  at::Tensor merged = attention_only ? at::Tensor() : at::empty({B * S, H}, rows.options());
  kernels::Scaling scaling = kernels::Scaling::DivideScores;
  if (cfg.score_scaling == ModelConfig::ScoreScaling::DivideQueries) scaling = kernels::Scaling::DivideQueries;
  if (cfg.score_scaling == ModelConfig::ScoreScaling::MultiplyScores) scaling = kernels::Scaling::MultiplyScores;
  // Each (example, head) on its own n x n block: the same products on the same shapes as the pair alone,
  // so a pair gets identical numbers in any batch. One head after another, as ATen's bmm multiplies them.
  const float* qkv_rows = rows.data_ptr<float>();
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = batch.lengths[static_cast<std::size_t>(b)];
    TORCH_CHECK(n >= 1 && n <= S, "row ", b, " has ", n, " tokens in a batch of ", S);
    for (int64_t h = 0; h < NH; ++h) {
      kernels::HeadAttention a;
      a.n = n;
      a.d = D;
      a.q = qkv_rows + b * S * 3 * H + h * D;
      a.k = a.q + H;
      a.v = a.q + 2 * H;
      a.ld_qkv = 3 * H;
      if (bias.defined()) a.bias = bias.data_ptr<float>() + h * S * S, a.ld_bias = S;
      a.probs = out.attention_at(b, li, h);
      a.ld_probs = out.attention_stride(b);
      if (merged.defined()) a.ctx = merged.data_ptr<float>() + b * S * H + h * D, a.ld_ctx = H;
      kernels::attend_head(a, scaling);
      zero_padding(a.probs, n, a.ld_probs);
    }
    if (merged.defined() && n < S) merged.narrow(0, b * S + n, S - n).zero_();
  }
  return merged;
}

at::Tensor Transformer::Impl::merge_heads(const at::Tensor& ctx) const {
  return ctx.permute({0, 2, 1, 3}).reshape({-1, cfg.hidden_size});
}

at::Tensor Transformer::Impl::attention_residual(const Layer& L, const at::Tensor& merged, at::Tensor x) const {
  return L.attn_out.plus(merged, std::move(x));
}

at::Tensor Transformer::Impl::attention_norm(const Layer& L, at::Tensor pre) const {
  return layer_norm(std::move(pre), L.ln1_w, L.ln1_b, cfg.layer_norm_eps);
}

at::Tensor Transformer::Impl::feed_forward(const Layer& L, at::Tensor y) const {
  const auto& c = cfg;
  auto norm = [&](at::Tensor t) { return layer_norm(std::move(t), L.ln2_w, L.ln2_b, c.layer_norm_eps); };
  at::Tensor inter, hidden;  // the latter in bf16, rounded by the kernel that wrote it (bf16_hand_off)
  {
    const at::Tensor input = c.pre_norm ? norm(y) : y;  // released before y is summed into
    if (bf16_hand_off(L.inter, L.out, input) && !c.gated_ffn) {
      hidden = bf16_hidden(L.inter, input, c.activation);
    } else if (c.gated_ffn) {  // GeGLU: [a | g] -> act(a) * g
      const auto parts = L.inter(input).chunk(2, -1);
      inter = activate(parts[0], c.activation) * parts[1];
    } else {
      inter = L.inter.activated(input, c.activation);
    }
  }
  // y + out(inter), summed in the same order either way
  at::Tensor out = hidden.defined() ? L.out.plus_from_bf16(hidden, std::move(y)) : L.out.plus(inter, std::move(y));
  return c.pre_norm ? out : norm(std::move(out));
}

at::Tensor Transformer::Impl::finish_layer(const Layer& L, const at::Tensor& merged, at::Tensor x) const {
  at::Tensor y = attention_residual(L, merged, std::move(x));
  return feed_forward(L, cfg.pre_norm ? std::move(y) : attention_norm(L, std::move(y)));
}

std::vector<std::vector<int64_t>> equal_length_chunks(const TokenBatch& batch, int64_t copies, int64_t tokens) {
  std::map<int64_t, std::vector<int64_t>> by_length;
  for (int64_t b = 0; b < batch.batch; ++b) by_length[batch.lengths[static_cast<std::size_t>(b)]].push_back(b);
  std::vector<std::vector<int64_t>> chunks;
  for (const auto& [n, rows] : by_length) {
    const auto per_chunk = static_cast<std::size_t>(std::max<int64_t>(1, tokens / std::max<int64_t>(1, copies * n)));
    for (std::size_t i = 0; i < rows.size(); i += per_chunk)
      chunks.emplace_back(rows.begin() + static_cast<std::ptrdiff_t>(i),
                          rows.begin() + static_cast<std::ptrdiff_t>(std::min(rows.size(), i + per_chunk)));
  }
  return chunks;
}

RowGroup gather_rows(const TokenBatch& batch, const std::vector<int64_t>& rows, const at::Device& device) {
  RowGroup g;
  g.rows = rows;
  g.n = batch.lengths[static_cast<std::size_t>(rows.at(0))];
  std::vector<int64_t> ids, types;
  for (auto r : rows) {
    const auto at = static_cast<std::ptrdiff_t>(r * batch.seq_len);
    ids.insert(ids.end(), batch.input_ids.begin() + at, batch.input_ids.begin() + at + g.n);
    types.insert(types.end(), batch.token_type_ids.begin() + at, batch.token_type_ids.begin() + at + g.n);
  }
  auto i64 = at::TensorOptions().dtype(at::kLong);
  const auto count = static_cast<int64_t>(ids.size());
  g.ids = at::from_blob(ids.data(), {count}, i64).clone().to(device);
  g.types = at::from_blob(types.data(), {count}, i64).clone().to(device);
  return g;
}

EncoderOutput Transformer::Impl::forward(const TokenBatch& batch, ForwardOutputs want) const {
  if (stack) {
    check_batch(batch);
    set_compute_threads(opt.threads);
    return stack->forward(batch, want);
  }
  const bool want_hidden = want.hidden_states;
  const auto& m = *this;
  const auto& c = m.cfg;
  const int64_t B = batch.batch, S = batch.seq_len, H = c.hidden_size, NH = c.num_heads, D = c.head_dim();
  check_batch(batch);
  set_compute_threads(m.opt.threads);
  c10::InferenceMode guard;
  auto i64 = at::TensorOptions().dtype(at::kLong);
  auto ids = at::from_blob(const_cast<int64_t*>(batch.input_ids.data()), {B * S}, i64).to(m.device);
  auto types = at::from_blob(const_cast<int64_t*>(batch.token_type_ids.data()), {B * S}, i64).to(m.device);
  auto x = embed(ids, types, B, S);
  const RelativePositions rel = m.relative_positions(S);

  EncoderOutput out;
  out.batch = B;
  out.layers = c.num_layers;
  out.heads = NH;
  for (int64_t l = 0; l < c.num_layers; ++l) out.key_ranges.push_back(c.key_range(l));
  out.seq_len = S;
  out.hidden_size = H;
  bool all_plain = true;  // the plain kernel writes every value, padding included; ATen's paths only the blocks
  for (int64_t li = 0; li < c.num_layers; ++li) all_plain &= m.has_plain_attention(m.layer(li), rel);
  if (want.compact_attention && all_plain) {
    std::size_t start = 0;
    for (const int64_t n : batch.lengths) {
      out.compact_examples.push_back({start, n});
      start += static_cast<std::size_t>(c.num_layers * NH * n * n);
    }
    out.attention.resize(start);
  } else {
    out.attention.resize(static_cast<std::size_t>(B * c.num_layers * NH * S * S));
  }
  if (!all_plain) std::fill(out.attention.begin(), out.attention.end(), 0.0f);
  // ATen's paths write through the padded view (never compact: those run only where every layer is plain).
  const at::Tensor attn_out =
      out.compact_examples.empty() ? at::from_blob(out.attention.data(), {B, c.num_layers, NH, S, S}) : at::Tensor();
  at::Tensor hidden_out;
  if (want_hidden) {
    out.hidden_states.resize(static_cast<std::size_t>((c.num_layers + 1) * B * S * H));
    hidden_out = at::from_blob(out.hidden_states.data(), {c.num_layers + 1, B * S, H});
    hidden_out.select(0, 0).copy_(x);
  }
  at::Tensor norms_out;
  if (want.value_norms) {
    out.value_norms.assign(static_cast<std::size_t>(B * c.num_layers * NH * S), 0.0f);
    norms_out = at::from_blob(out.value_norms.data(), {B, c.num_layers, NH, S});
  }
  bool ragged = false;
  for (auto n : batch.lengths) ragged |= n != S;
  for (int64_t li = 0; li < c.num_layers; ++li) {
    const auto& L = m.layer(li);
    // No attention depends on the last layer's context, output projection, LayerNorms or FFN: without
    // hidden states the last layer stops once its attention probabilities are stored. Every layer's
    // attention is computed by the same operations either way, so it is bit-identical.
    const bool attention_only = !want_hidden && li + 1 == c.num_layers;
    auto qkv = L.qkv(attention_input(L, x)).view({B, S, 3, NH, D});
    auto q = qkv.select(2, 0).permute({0, 2, 1, 3});  // [B, NH, S, D]
    auto k = qkv.select(2, 1).permute({0, 2, 3, 1});  // [B, NH, D, S]
    auto v = qkv.select(2, 2).permute({0, 2, 1, 3});
    if (want.value_norms) {  // ||v_h(x_j) W_O^h||: per head, [B*S, D] x [D, H], then the norm of each row
      auto f = at::matmul(qkv.select(2, 2).permute({2, 0, 1, 3}).reshape({NH, B * S, D}), L.value_out);
      auto norms = at::linalg_vector_norm(f, 2, {-1}).view({NH, B, S}).permute({1, 0, 2});
      for (int64_t b = 0; b < B; ++b) {
        const int64_t n = batch.lengths[static_cast<std::size_t>(b)];
        norms_out[b][li].narrow(-1, 0, n).copy_(norms[b].narrow(-1, 0, n));
      }
    }
    at::Tensor ctx;
    if (m.has_plain_attention(L, rel)) {
      ctx = m.plain_attention(qkv.view({B * S, 3 * H}), batch, li, out, rel, attention_only);
    } else if (!ragged) {
      auto probs = at::softmax(m.attention_scores(L, q, k, rel), -1);  // no padding in this batch, so no mask
      attn_out.select(1, li).copy_(probs);
      if (!attention_only) ctx = merge_heads(at::matmul(probs, v));
    } else {
      // Each example on its own n x n block: the same operations on the same shapes as the pair
      // alone, so a pair gets identical numbers in any batch (padding changes BLAS blocking).
      // Consecutive examples of equal length (length-bucketed batches have runs of them) go through
      // as one batched product, which multiplies each matrix on its own as the pair alone does.
      // Padded query rows stay zero; they never reach a real token.
      if (!attention_only) ctx = at::zeros({B, NH, S, D}, q.options());
      for (int64_t b = 0, run = 0; b < B; b += run) {
        const int64_t n = batch.lengths[static_cast<std::size_t>(b)];
        for (run = 1; b + run < B && batch.lengths[static_cast<std::size_t>(b + run)] == n;) ++run;
        auto probs = at::softmax(
            m.attention_scores(L, q.narrow(0, b, run).narrow(-2, 0, n), k.narrow(0, b, run).narrow(-1, 0, n), rel.first(n)),
            -1);
        attn_out.narrow(0, b, run).select(1, li).narrow(-2, 0, n).narrow(-1, 0, n).copy_(probs);
        if (!attention_only)
          ctx.narrow(0, b, run).narrow(-2, 0, n).copy_(at::matmul(probs, v.narrow(0, b, run).narrow(-2, 0, n)));
      }
      if (!attention_only) ctx = merge_heads(ctx);
    }
    if (attention_only) break;
    x = finish_layer(L, ctx, std::move(x));
    if (want_hidden) hidden_out.select(0, li + 1).copy_(x);
  }
  return out;
}

}  // namespace attnscan
