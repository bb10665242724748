#pragma once
// How a layer-described family's checkpoint stores each tensor the layer stack reads. The stack reads tensors
// by role (tensor_roles below: "layers.3.attn.q.weight"); a family's map says, for each role, which stored
// tensor holds it and how to turn it into the role's [out, in] fp32 layout: transpose (GPT-2's Conv1D), take
// one part of a fused projection (q|k|v side by side, or interleaved per head as GPT-NeoX stores them), add
// one (Gemma's norms). Standard library only.
#include <cstdint>
#include <string>
#include <vector>

namespace attnscan {

namespace tensor_roles {
std::string layer(int64_t layer, const std::string& part);  // "layers.{layer}.{part}"
inline constexpr const char* kTokens = "embed.tokens";
inline constexpr const char* kPositions = "embed.positions";
inline constexpr const char* kFinalNormW = "final_norm.weight";
inline constexpr const char* kFinalNormB = "final_norm.bias";
inline constexpr const char* kLmHead = "lm_head.weight";
// Per layer, after "layers.{i}.":
inline constexpr const char* kQ = "attn.q", *kK = "attn.k", *kV = "attn.v", *kO = "attn.o";  // + ".weight" / ".bias"
inline constexpr const char* kQNorm = "attn.q_norm.weight", *kKNorm = "attn.k_norm.weight";
inline constexpr const char* kAttnIn = "norm.attn_in", *kAttnOut = "norm.attn_out";  // + ".weight" / ".bias"
inline constexpr const char* kFfnIn = "norm.ffn_in", *kFfnOut = "norm.ffn_out";
inline constexpr const char* kUp = "ffn.up", *kGate = "ffn.gate", *kDown = "ffn.down";
}  // namespace tensor_roles

struct TensorSource {
  std::string role;
  std::vector<int64_t> shape;  // the role's shape, after the transform
  std::string stored;          // the checkpoint's name (without the family's prefix)
  bool transpose = false;      // stored [in, out]
  int64_t part = 0, parts = 1;  // the role is rows [part * r, (part + 1) * r) of `parts` equal row blocks
  int64_t interleaved_heads = 0;  // > 0: those row blocks repeat per head (head h: parts blocks of r / heads rows)
  bool add_one = false;           // the role is 1 + the stored values
  bool optional = false;          // may be absent (an LM head tied to the token embeddings)

  TensorSource& transposed() { transpose = true; return *this; }
  TensorSource& part_of(int64_t p, int64_t n, int64_t heads = 0) { part = p, parts = n, interleaved_heads = heads; return *this; }
  TensorSource& plus_one() { add_one = true; return *this; }
  TensorSource& may_be_absent() { optional = true; return *this; }
  bool copied() const { return transpose || parts > 1 || add_one; }  // else read where the checkpoint maps it
  std::vector<int64_t> stored_shape() const;
};

class TensorMap {
 public:
  TensorSource& add(std::string role, std::vector<int64_t> shape, std::string stored) {
    sources_.push_back({std::move(role), std::move(shape), std::move(stored)});
    return sources_.back();
  }
  TensorSource& add(TensorSource source) {
    sources_.push_back(std::move(source));
    return sources_.back();
  }
  const std::vector<TensorSource>& sources() const { return sources_; }

 private:
  std::vector<TensorSource> sources_;
};

// The role's fp32 values from the stored tensor's (in its layout, as fp32), as `source` describes.
std::vector<float> transformed(const TensorSource& source, const std::vector<float>& stored);

}  // namespace attnscan
