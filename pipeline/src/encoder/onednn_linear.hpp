#pragma once
// A linear layer y = x W^T + b through oneDNN's inner product, with the weights packed once, at load, into
// the layout the CPU's kernel wants (on AMX: bf16 tiles), instead of on every call as LibTorch's
// mkldnn_linear does. fp32 in and out; in bf16 the input rows are rounded to bf16 (to nearest even, as
// LibTorch rounds) and the products accumulate in fp32 into an fp32 output.
// Standard library and oneDNN only (LibTorch stays in encoder.cpp).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace attnscan::kernels {

// What a layer does to x W^T + b in the kernel's own output pass, instead of in a pass of its own.
enum class Epilogue : uint8_t {
  None,
  GeluErf,      // 0.5 v (1 + erf(v / sqrt 2))
  GeluTanh,     // 0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3)))
  Relu,
  AddResidual,  // y holds the residual on entry; the result is added to it
};

class PackedLinear {
 public:
  // weight: out x in, row-major; bias: out values (null: none).
  PackedLinear(const float* weight, const float* bias, int64_t out, int64_t in, bool bf16);
  ~PackedLinear();
  PackedLinear(const PackedLinear&) = delete;
  PackedLinear& operator=(const PackedLinear&) = delete;

  int64_t out_features() const;
  int64_t in_features() const;
  // The rows apply() writes for `rows` input rows: bf16 computes whole blocks of 16 (the extra rows get
  // the bias); fp32 exactly `rows`.
  int64_t rows_computed(int64_t rows) const;
  // y (rows_computed(rows) x out) = epilogue(x (rows x in) W^T + b), both row-major and dense. Safe to
  // call from several threads.
  void apply(const float* x, int64_t rows, float* y, Epilogue epilogue = Epilogue::None) const;
  // bf16 layers only, for one layer feeding the next (the feed-forward's two): y (rows_computed(rows) x out,
  // bf16 bits) rounded to nearest even by the kernel, as the next layer would round it; and x given as such
  // (rows_computed(rows) rows).
  void apply_to_bf16(const float* x, int64_t rows, uint16_t* y, Epilogue epilogue) const;
  void apply_from_bf16(const uint16_t* x, int64_t rows, float* y, Epilogue epilogue = Epilogue::None) const;
  bool bf16() const;
  // The weights as they are computed with (bf16-rounded in bf16), out x in row-major fp32.
  std::vector<float> unpacked_weight() const;

 private:
  void run(const void* x, bool x_bf16, int64_t rows, void* y, bool y_bf16, Epilogue epilogue) const;
  struct State;
  std::unique_ptr<State> s_;
};

// Distinct shapes (rows, out, in, epilogue) whose oneDNN primitive is kept (~0.3 ms to create, and its JIT
// code); past this the least recently used goes. 8,000 PAWS pairs on MiniLM have 380.
inline constexpr std::size_t kLinearShapesKept = 512;
// Inner-product primitives this process has created (one per distinct shape while it stays kept).
std::size_t linear_primitives_created();

// fp32 to bf16, rounded to nearest even (NaN stays NaN), as c10::BFloat16 rounds.
uint16_t to_bf16(float x);
float from_bf16(uint16_t b);

}  // namespace attnscan::kernels
