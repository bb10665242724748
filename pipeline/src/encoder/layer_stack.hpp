#pragma once
// The forward of a model its family describes layer by layer (ModelConfig::layer_specs: the decoders): token
// (and learned position) embeddings, then each layer as its LayerSpec says (norm kind and placement,
// grouped-query attention with query/key norms, rotary positions and a key range, a plain or gated
// feed-forward block), operation by operation as Hugging Face's eager attention computes it. Included by
// encoder.cpp only (LibTorch inside).
#include <ATen/ATen.h>

#include <vector>

#include "encoder/encoder_impl.hpp"

namespace attnscan {

// A norm's weight (Gemma's 1 + w already added by the tensor map) and bias (LayerNorm only; may be undefined).
struct NormWeights {
  at::Tensor w, b;
};

// A rotary table: the inverse frequencies of a layer's RopeSpec and the scale of its cos and sin.
struct RotaryTable {
  at::Tensor inv_freq;  // [dims / 2], float32
  double scale = 1;     // yarn's attention factor; 1 otherwise
};

struct StackLayer {
  Linear qkv;  // [q | k | v] rows: heads, kv_heads and kv_heads times head_dim
  Linear out;
  at::Tensor value_out;  // [heads, head_dim, hidden]: head h's slice of the output projection, transposed
  at::Tensor q_norm, k_norm;  // [head_dim], where the attention has query/key norms
  NormWeights attn_in, attn_out, ffn_in, ffn_out;  // attn_out, ffn_out: sandwich only
  Linear up, gate, down;                           // gate: gated feed-forward blocks only
  RotaryTable rotary;                              // where the attention rotates
};

class LayerStack {
 public:
  LayerStack(const LoadedModel& model, const EncoderOptions& options, const at::Device& device);
  EncoderOutput forward(const TokenBatch& batch, ForwardOutputs want) const;
  std::unique_ptr<LayerSteps> steps(int64_t n) const;  // for rows of n tokens (encoder_impl.hpp)

 private:
  at::Tensor embed(const at::Tensor& ids, int64_t B, int64_t S) const;
  at::Tensor norm(const NormSpec& spec, const NormWeights& n, const at::Tensor& x) const;
  // The layer's attention of every example of the batch from its input h [B * S, hidden]: the probabilities
  // into `probs` [B, heads, S, S] (zero outside each example's n x n block) and the merged context
  // [B * S, heads * head_dim] returned (zero on padding), unless attention_only.
  // With `norms` ([B, heads, S]) defined, each token's value-vector norm per head goes there (as the encoder's:
  // ||v_h(x_j) W_O^h||, the value with its bias through head h's slice of the output projection).
  at::Tensor attention(const StackLayer& L, const AttentionSpec& a, const at::Tensor& h, const TokenBatch& batch,
                       const at::Tensor& probs, const at::Tensor& norms, bool attention_only) const;
  // The probabilities [R, heads, n, n] and value vectors [R, heads, n, head_dim] (each key/value head repeated
  // for its query heads) of R rows of n tokens from their q|k|v projection [R, n, width].
  SelfAttention self_attention(const StackLayer& L, const AttentionSpec& a, const at::Tensor& qkv) const;
  at::Tensor feed_forward(const StackLayer& L, const FfnSpec& f, const at::Tensor& x) const;
  // One layer from its input x [B * S, hidden] to its output, given its attention output a (after the
  // output projection).
  at::Tensor finish_layer(const StackLayer& L, const LayerSpec& s, at::Tensor x, const at::Tensor& a) const;

  friend class StackSteps;
  ModelConfig cfg_;
  EncoderOptions opt_;
  at::Device device_;
  at::Tensor tokens_, positions_;
  NormWeights final_norm_;
  std::vector<StackLayer> layers_;
};

// The inverse frequencies of `rope` as Hugging Face's modeling_rope_utils computes them (float32), for sequences
// up to max_positions (dynamic scaling leaves them as default there).
RotaryTable rotary_table(const RopeSpec& rope);

}  // namespace attnscan
