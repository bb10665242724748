#pragma once
// What the encoder's LibTorch translation units share (encoder.cpp: loading and the forward;
// head_importance.cpp: gates, ablation and gradients; context_mixing.cpp: value zeroing and ALTI):
// the weights as tensors, one layer's steps, rows grouped by length. Not an interface: included by
// those three files only.
#include <ATen/ATen.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "encoder/encoder.hpp"
#include "encoder/onednn_linear.hpp"
#include "model/task_heads.hpp"

namespace attnscan {

at::Tensor to_tensor(const TensorView& v);  // a float32 copy
// The float32 values of v without a copy where the checkpoint holds them so (aligned F32), else to_tensor(v).
// Valid only while the weights stay mapped, and never written: for values copied or packed at once.
at::Tensor mapped_tensor(const TensorView& v);
// at::layer_norm over the last dimension: its values, computed by kernels::layer_norm_rows where that was
// shown to give exactly them (in place where x is the only handle on its storage), by ATen otherwise
// (and wherever a gradient flows).
at::Tensor layer_norm(at::Tensor x, const at::Tensor& w, const at::Tensor& b, double eps);

at::Tensor activate(const at::Tensor& x, Activation a);  // as Hugging Face's ACT2FN computes it

struct Linear {
  at::Tensor weight;  // [out, in] for the BLAS (or CUDA); undefined when packed
  at::Tensor bias;    // [out]
  std::shared_ptr<const kernels::PackedLinear> packed;  // oneDNN, the weights packed once at load

  at::Tensor operator()(const at::Tensor& x) const { return fused(x, kernels::Epilogue::None); }  // x: [tokens, in]
  at::Tensor activated(const at::Tensor& x, Activation a) const;                   // act(this(x))
  // this(x) + residual. A residual handed over (std::move, no other handle to it or its storage) is
  // summed into in place where the packed kernel can write there (bf16: with room for its padding rows).
  at::Tensor plus(const at::Tensor& x, at::Tensor residual) const;
  // this(hidden) + residual for a packed bf16 layer, hidden in bf16 as bf16_hidden gives it; in place as plus.
  at::Tensor plus_from_bf16(const at::Tensor& hidden, at::Tensor residual) const;
  // this(x) with the epilogue in the kernel's output pass where the weights are packed; as separate ops
  // elsewhere (and where gradients flow: through the weights unpacked). `residual` only for AddResidual.
  at::Tensor fused(const at::Tensor& x, kernels::Epilogue e, at::Tensor residual = {}) const;
  at::Tensor dense_weight() const;
};

// A layer of w [out, in] and b [out]; w may be a mapped_tensor: the layer keeps a copy or a packing of it.
Linear make_linear(const at::Tensor& w, at::Tensor b, const EncoderOptions& opt, const at::Device& dev);
// In bf16 one linear layer may hand its output to the next in bf16, rounded by the kernel that writes it
// (as the next would round it) instead of in fp32 rounded in a pass of its own.
bool bf16_hand_off(const Linear& first, const Linear& second, const at::Tensor& x);
// act(inter(x)) so, in bf16, its padding rows included (bf16_hand_off only), for Linear::plus_from_bf16.
at::Tensor bf16_hidden(const Linear& inter, const at::Tensor& x, Activation a);

struct Layer {
  Linear qkv, attn_out, inter, out;
  at::Tensor value_out;  // [heads, head_dim, hidden]: head h's slice of the output projection, transposed
  at::Tensor ln1_w, ln1_b, ln2_w, ln2_b;
  // DeBERTa: the relative-position embeddings through the layer's position key (c2p) and query (p2c)
  // projections, [heads, head_dim, 2 * span]; weights only, so computed once at load.
  at::Tensor pos_key, pos_query;
  bool local = false;  // ModernBERT: a sliding-window layer (its own rotary theta)
};

// Rotary positions: cos and sin of each position's angles, [n, head_dim].
struct Rotation {
  at::Tensor cos, sin;
};

// What a layer's scores add for relative positions, for rows of n tokens (positions 0 .. n - 1).
struct RelativePositions {
  at::Tensor bias;   // MPNet: [heads, n, n], added to the scores
  at::Tensor index;  // DeBERTa: [n, n], the relative-position embedding row of (query i, key j)
  Rotation global, local;  // ModernBERT: the rotations of global and local layers
  at::Tensor window;       // ModernBERT: [n, n] bool, true where a local layer's query i sees key j
  // The top-left m x m block: the same for rows of m <= n tokens.
  RelativePositions first(int64_t m) const;
};

// A task head's tensors (model/task_heads.hpp), float32 on the encoder's device.
struct HeadTensors {
  TaskHead head;
  at::Tensor dense_w, dense_b, norm_w, norm_b, out_w, out_b;
};

// MPNet's (T5-style) bucket of each relative position k - q, as its reference code computes it.
at::Tensor relative_position_bucket(int64_t S, int64_t num_buckets, int64_t max_distance);
// DeBERTa's rel_embeddings row of each (query i, key j): clamp(bucket(i - j) + span, 0, 2 span - 1), with
// make_log_bucket_position's float32 arithmetic when position_buckets > 0.
at::Tensor disentangled_position_index(int64_t S, const ModelConfig::Disentangled& d);
// Rotary cos/sin of positions 0 .. S - 1 for a head size and theta, in float32 as the reference code.
Rotation rotary_positions(int64_t S, int64_t head_dim, double theta);

// LibTorch's errors carry a C++ backtrace in what(); a user gets one line: what attnscan was doing
// and LibTorch's message.
[[noreturn]] void throw_libtorch_error(const c10::Error& e, const std::string& doing);

// One layer's self-attention for R unpadded rows of n tokens.
struct SelfAttention {
  at::Tensor probs;  // [R, heads, n, n]
  at::Tensor v;      // [R, heads, n, head_dim]: the value vectors (projection with its bias)
};

// Rows of one length, with their ids and types as unpadded [rows * n] tensors.
struct RowGroup {
  std::vector<int64_t> rows;
  int64_t n = 0;
  at::Tensor ids, types;
};

// The batch's rows grouped by length, each group cut into chunks of at most `tokens` tokens
// (`copies` x rows x length).
std::vector<std::vector<int64_t>> equal_length_chunks(const TokenBatch& batch, int64_t copies, int64_t tokens);
// `rows` (all n tokens long) as one group on `device`.
RowGroup gather_rows(const TokenBatch& batch, const std::vector<int64_t>& rows, const at::Device& device);

class LayerStack;  // encoder/layer_stack.hpp

// A forward over R unpadded rows of n tokens, step by step, as the analyses run it (head_importance.cpp's
// gates, ablation and gradients): one implementation per kind of model (the encoder families', the layer
// stack's), so that each analysis is written once.
class LayerSteps {
 public:
  virtual ~LayerSteps() = default;
  virtual int64_t layers() const = 0;
  virtual int64_t heads() const = 0;     // of every layer
  virtual int64_t head_dim() const = 0;
  virtual int64_t hidden() const = 0;
  virtual at::Tensor embed(const RowGroup& rows) const = 0;  // [R * n, hidden]
  // Layer li's attention probabilities and value vectors (one per query head) from its input x [R * n, hidden].
  virtual SelfAttention attention(int64_t li, const at::Tensor& x, int64_t R) const = 0;
  // Layer li's attention context [R, heads, n, head_dim], each head's probabilities multiplied by its gate
  // ([R, heads]) first where `gate` is defined.
  at::Tensor attend(int64_t li, const at::Tensor& x, int64_t R, const at::Tensor& gate) const {
    const SelfAttention a = attention(li, x, R);
    return at::matmul(gate.defined() ? a.probs * gate.view({R, heads(), 1, 1}) : a.probs, a.v);
  }
  // The rest of layer li from that context ([R, heads, n, head_dim], heads side by side): its output.
  virtual at::Tensor finish_layer(int64_t li, const at::Tensor& ctx, at::Tensor x) const = 0;
  virtual at::Tensor final_output(const at::Tensor& x) const = 0;  // as the model returns it
};

struct Transformer::Impl {
  ModelConfig cfg;
  EncoderOptions opt;
  at::Device device{at::kCPU};
  at::Tensor word, position, token_type, emb_ln_w, emb_ln_b;
  std::optional<Linear> embed_project;  // ELECTRA, ALBERT: embedding_size -> hidden_size
  at::Tensor relative_bias;             // MPNet: [buckets, heads]; undefined when the family has none
  at::Tensor final_norm_w, final_norm_b;  // pre-norm models: the norm after the last layer
  std::vector<Layer> layers;            // one per stored layer (ALBERT's layers share them)
  std::optional<HeadTensors> head;      // the task head of gradient importance, when one was asked for
  std::shared_ptr<const LayerStack> stack;  // a model described layer by layer (the decoders) runs here instead

  RelativePositions relative_positions(int64_t S) const;  // for rows of S tokens
  std::unique_ptr<LayerSteps> steps(int64_t n) const;     // the forward's steps for rows of n tokens
  const Layer& layer(int64_t li) const { return layers[static_cast<std::size_t>(cfg.stored_layer(li))]; }

  void load(const LoadedModel& model);
  void load_head(const TaskHead& head);
  void check_batch(const TokenBatch& batch) const;
  // The embeddings' output, [B * S, hidden]: ids and types [B * S] on the device.
  at::Tensor embed(const at::Tensor& ids, const at::Tensor& types, int64_t B, int64_t S) const;
  // word[id] + position[offset + s] + token_type[type] of each token in one pass, added in the order the
  // lookups and broadcast adds of the general path add them (the same numbers), where every table is a
  // contiguous float tensor on the CPU outside autograd.
  bool summed_in_one_pass(const at::Tensor& ids, const at::Tensor& types) const;
  at::Tensor summed_embeddings(const at::Tensor& ids, const at::Tensor& types, int64_t B, int64_t S) const;
  // The attention scores of queries q [..., n, head_dim] and keys k [..., head_dim, n], before the softmax.
  at::Tensor attention_scores(const Layer& L, const at::Tensor& q, const at::Tensor& k, const RelativePositions& rel) const;
  SelfAttention self_attention(const Layer& L, const at::Tensor& x, int64_t R, int64_t n,
                               const RelativePositions& rel) const;
  // Whether layer L's attention is the plain kind (scaled scores, an optional additive bias, a softmax
  // over all keys) that kernels::attend_head computes on the CPU without a copy.
  bool has_plain_attention(const Layer& L, const RelativePositions& rel) const;
  // Plain attention of every head of every example of `batch` from the projection qkv [B * S, 3 * hidden]:
  // the probabilities into layer li of `out`'s attention (padded maps: zero on padding), and the merged
  // context [B * S, hidden] (zero on padding) returned unless attention_only.
  at::Tensor plain_attention(const at::Tensor& qkv, const TokenBatch& batch, int64_t li,
                             EncoderOutput& out, const RelativePositions& rel, bool attention_only) const;
  // A context [B, heads, S, head_dim] as the output projection reads it: [B * S, hidden], heads side by side.
  at::Tensor merge_heads(const at::Tensor& ctx) const;
  // The attention block's output before its LayerNorm: the output projection of the merged context
  // [B * S, hidden] plus the residual x, the layer's input [B * S, hidden].
  at::Tensor attention_residual(const Layer& L, const at::Tensor& merged, at::Tensor x) const;
  at::Tensor attention_norm(const Layer& L, at::Tensor pre) const;  // the first LayerNorm (post-norm)
  // What the layer's query, key and value projection reads: x, or (pre-norm) its norm of x.
  at::Tensor attention_input(const Layer& L, const at::Tensor& x) const;
  // The last layer's output as the model returns it (pre-norm models: through the final norm).
  at::Tensor final_output(const at::Tensor& x) const;
  // The rest of the layer from the attention block's output y: FFN, residual and LayerNorm (pre-norm:
  // the norm first, then the FFN, then the residual).
  at::Tensor feed_forward(const Layer& L, at::Tensor y) const;
  // One layer after its attention (the merged context): the three above in turn. x and y are residuals
  // (Linear::plus): given with std::move, their storage takes the sums.
  at::Tensor finish_layer(const Layer& L, const at::Tensor& merged, at::Tensor x) const;
  EncoderOutput forward(const TokenBatch& batch, ForwardOutputs want) const;
  HeadImportance head_importance(const TokenBatch& batch, const ImportanceRequest& request) const;
  ContextMixing context_mixing(const TokenBatch& batch, const MixingRequest& request) const;
};

}  // namespace attnscan
