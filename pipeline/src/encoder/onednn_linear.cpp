#include "encoder/onednn_linear.hpp"

#include <dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <list>
#include <mutex>
#include <unordered_map>

#include "common/error.hpp"

namespace attnscan::kernels {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// bf16 rows are computed in multiples of this (zero rows added), so a run needs few distinct primitives.
constexpr int64_t kBf16RowBlock = 16;

[[noreturn]] void fail(const dnnl::error& e, const char* doing) {
  throw Error(std::string("oneDNN failed ") + doing + ": " + e.what());
}

inline uint16_t round_to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(nan ? (u >> 16) | 0x40u : rounded);  // a NaN keeps its sign and stays quiet
}

__attribute__((target_clones("avx512f", "avx2", "default")))
void round_rows_to_bf16(const float* x, uint16_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = round_to_bf16(x[i]);
}

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// One inner-product primitive per (rows, out, in, precision, bias, epilogue): the layers of a model share
// them (a primitive holds no weights) and a run's batches reuse them.
struct ShapeKey {
  int64_t rows, out, in;
  bool bf16, bias;
  Epilogue epilogue;
  bool bf16_out = false;  // the output rounded to bf16 by the kernel (bf16 only)
  bool operator==(const ShapeKey& o) const {
    return rows == o.rows && out == o.out && in == o.in && bf16 == o.bf16 && bias == o.bias && epilogue == o.epilogue &&
           bf16_out == o.bf16_out;
  }
};
struct ShapeHash {
  std::size_t operator()(const ShapeKey& k) const {
    return std::hash<int64_t>()((((k.rows * 1000003 + k.out) * 1000003 + k.in) * 8 + static_cast<int64_t>(k.epilogue)) * 8 +
                                k.bf16_out * 4 + k.bf16 * 2 + k.bias);
  }
};
struct Shape {
  dnnl::inner_product_forward primitive;
  dnnl::memory::desc weights, scratch;
};

// The epilogue as oneDNN post-ops, applied to each output block while it is still in registers.
dnnl::post_ops post_ops_of(Epilogue e) {
  dnnl::post_ops ops;
  switch (e) {
    case Epilogue::None: break;
    case Epilogue::GeluErf: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f); break;
    case Epilogue::GeluTanh: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_tanh, 0.f, 0.f); break;
    case Epilogue::Relu: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f); break;
    case Epilogue::AddResidual: ops.append_sum(1.f); break;
  }
  return ops;
}

dnnl::inner_product_forward::primitive_desc describe(const ShapeKey& k) {
  const dt compute = k.bf16 ? dt::bf16 : dt::f32;
  const dnnl::memory::desc src({k.rows, k.in}, compute, tag::ab), weights({k.out, k.in}, compute, tag::any),
      bias({k.out}, dt::f32, tag::a), dst({k.rows, k.out}, k.bf16_out ? dt::bf16 : dt::f32, tag::ab);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // each call brings its own: calls may overlap
  attr.set_post_ops(post_ops_of(k.epilogue));
  const auto kind = dnnl::prop_kind::forward_inference;
  const auto desc = k.bias ? dnnl::inner_product_forward::desc(kind, src, weights, bias, dst)
                           : dnnl::inner_product_forward::desc(kind, src, weights, dst);
  return {desc, attr, cpu_engine()};
}

std::atomic<std::size_t> primitives_created{0};

Shape shape_of(const ShapeKey& key) {
  static std::mutex mutex;
  static std::list<std::pair<ShapeKey, Shape>> recent;  // most recently used first
  static std::unordered_map<ShapeKey, decltype(recent)::iterator, ShapeHash> shapes;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = shapes.find(key); it != shapes.end()) {
    recent.splice(recent.begin(), recent, it->second);
    return it->second->second;
  }
  const auto pd = describe(key);
  recent.emplace_front(key, Shape{dnnl::inner_product_forward(pd), pd.weights_desc(), pd.scratchpad_desc()});
  ++primitives_created;
  shapes.emplace(key, recent.begin());
  if (recent.size() > kLinearShapesKept) {
    shapes.erase(recent.back().first);
    recent.pop_back();
  }
  return recent.front().second;
}

void reorder(const dnnl::memory& from, const dnnl::memory& to) {
  dnnl::stream stream(cpu_engine());
  dnnl::reorder(from, to).execute(stream, const_cast<dnnl::memory&>(from), const_cast<dnnl::memory&>(to));
  stream.wait();
}

}  // namespace

std::size_t linear_primitives_created() { return primitives_created; }

uint16_t to_bf16(float x) { return round_to_bf16(x); }

float from_bf16(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

struct PackedLinear::State {
  int64_t out = 0, in = 0;
  bool bf16 = false;
  dnnl::memory bias;  // f32 [out], empty when none
  std::mutex mutex;
  std::vector<dnnl::memory> packed;  // the weights in each layout a kernel asked for (usually one)

  ShapeKey key(int64_t rows, Epilogue e = Epilogue::None) const { return {rows, out, in, bf16, static_cast<bool>(bias), e}; }

  // The weights in the layout `want`, packed from the first layout once.
  dnnl::memory weights_as(const dnnl::memory::desc& want) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& p : packed)
      if (p.get_desc() == want) return p;
    dnnl::memory m(want, cpu_engine());
    reorder(packed.front(), m);
    packed.push_back(m);
    return m;
  }
};

PackedLinear::PackedLinear(const float* weight, const float* bias, int64_t out, int64_t in, bool bf16) : s_(new State) {
  s_->out = out;
  s_->in = in;
  s_->bf16 = bf16;
  try {
    if (bias) {
      s_->bias = dnnl::memory({{out}, dt::f32, tag::a}, cpu_engine());
      std::memcpy(s_->bias.get_data_handle(), bias, static_cast<std::size_t>(out) * sizeof(float));
    }
    // Packed for a typical batch; a kernel that wants another layout for some row count gets its own copy.
    const dnnl::memory plain({{out, in}, dt::f32, tag::ab}, cpu_engine(), const_cast<float*>(weight));
    s_->packed.emplace_back(shape_of(s_->key(256)).weights, cpu_engine());
    reorder(plain, s_->packed.front());  // f32 -> bf16 rounds to nearest even
  } catch (const dnnl::error& e) {
    fail(e, "packing a linear layer's weights");
  }
}

PackedLinear::~PackedLinear() = default;

int64_t PackedLinear::out_features() const { return s_->out; }
int64_t PackedLinear::in_features() const { return s_->in; }

int64_t PackedLinear::rows_computed(int64_t rows) const {
  return s_->bf16 ? (rows + kBf16RowBlock - 1) / kBf16RowBlock * kBf16RowBlock : rows;
}

void PackedLinear::apply(const float* x, int64_t rows, float* y, Epilogue epilogue) const {
  run(x, false, rows, y, false, epilogue);
}

void PackedLinear::apply_to_bf16(const float* x, int64_t rows, uint16_t* y, Epilogue epilogue) const {
  if (!s_->bf16) throw Error("internal: a bf16 output from an fp32 linear layer");
  if (epilogue == Epilogue::AddResidual) throw Error("internal: the residual is added in fp32");
  run(x, false, rows, y, true, epilogue);
}

void PackedLinear::apply_from_bf16(const uint16_t* x, int64_t rows, float* y, Epilogue epilogue) const {
  if (!s_->bf16) throw Error("internal: a bf16 input to an fp32 linear layer");
  run(x, true, rows, y, false, epilogue);
}

void PackedLinear::run(const void* x, bool x_bf16, int64_t rows, void* y, bool y_bf16, Epilogue epilogue) const {
  if (rows <= 0) return;
  try {
    const int64_t computed = rows_computed(rows);
    ShapeKey key = s_->key(computed, epilogue);
    key.bf16_out = y_bf16;
    const Shape shape = shape_of(key);
    const dnnl::memory weights = s_->weights_as(shape.weights);
    thread_local std::vector<uint16_t> rounded;
    thread_local std::vector<unsigned char> scratch;
    const void* src = x;
    if (s_->bf16 && !x_bf16) {
      const auto n = static_cast<std::size_t>(rows * s_->in), padded = static_cast<std::size_t>(computed * s_->in);
      if (rounded.size() < padded) rounded.resize(padded);
      round_rows_to_bf16(static_cast<const float*>(x), rounded.data(), n);
      std::fill(rounded.begin() + static_cast<std::ptrdiff_t>(n), rounded.begin() + static_cast<std::ptrdiff_t>(padded), 0);
      src = rounded.data();
    }
    if (s_->bf16 && epilogue == Epilogue::AddResidual)  // the padding rows' residual: defined, and discarded
      std::fill(static_cast<float*>(y) + rows * s_->out, static_cast<float*>(y) + computed * s_->out, 0.f);
    if (scratch.size() < shape.scratch.get_size()) scratch.resize(shape.scratch.get_size());
    auto& e = cpu_engine();
    const dt compute = s_->bf16 ? dt::bf16 : dt::f32;
    dnnl::memory src_m({{computed, s_->in}, compute, tag::ab}, e, const_cast<void*>(src));
    dnnl::memory dst_m({{computed, s_->out}, y_bf16 ? dt::bf16 : dt::f32, tag::ab}, e, y);
    dnnl::memory scratch_m(shape.scratch, e, scratch.data());
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, weights},
                                               {DNNL_ARG_DST, dst_m}, {DNNL_ARG_SCRATCHPAD, scratch_m}};
    if (s_->bias) args.emplace(DNNL_ARG_BIAS, s_->bias);
    dnnl::stream stream(e);
    shape.primitive.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error& e) {
    fail(e, "in a linear layer");
  }
}

bool PackedLinear::bf16() const { return s_->bf16; }

std::vector<float> PackedLinear::unpacked_weight() const {
  std::vector<float> w(static_cast<std::size_t>(s_->out * s_->in));
  try {
    std::lock_guard<std::mutex> lock(s_->mutex);
    dnnl::memory plain({{s_->out, s_->in}, dt::f32, tag::ab}, cpu_engine(), w.data());
    reorder(s_->packed.front(), plain);
  } catch (const dnnl::error& e) {
    fail(e, "unpacking a linear layer's weights");
  }
  return w;
}

}  // namespace attnscan::kernels
