#pragma once
// BERT encoder (LibTorch inside, not in this header) returning every layer's attention probabilities.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/device.hpp"
#include "model/model_config.hpp"
#include "model/model_weights.hpp"
#include "model/task_heads.hpp"
#include "tokenizer/tokenizer.hpp"

namespace attnscan {

enum class Precision { F32, BF16 };
Precision parse_precision(const std::string& text);  // "fp32" | "bf16"
const char* precision_name(Precision p);

// What computes the linear layers on CPU. auto: oneDNN with the weights packed once (less CPU than
// OpenBLAS, which packs them on every call: docs/performance.md, "Measured and not done").
enum class LinearBackend { Auto, OpenBlas, OneDnn };
LinearBackend parse_linear_backend(const std::string& text);  // "auto" | "openblas" | "onednn"
const char* linear_backend_name(LinearBackend b);

struct EncoderOptions {
  Precision precision = Precision::F32;  // bf16: linear layers in bfloat16, the rest in fp32
  int threads = 0;                       // intra-op threads; 0 = all cores
  DeviceSpec device;
  LinearBackend linear = LinearBackend::Auto;
  int load_threads = 1;  // threads that copy and pack the weights at load; 0 = all cores (a run gives its own)
};

// The backend `options` gets on CPU here: never Auto. OpenBlas only for fp32 with OpenBLAS loaded.
LinearBackend resolve_linear_backend(const EncoderOptions& options);

// A right-padded batch of encodings: row b holds lengths[b] real tokens then padding.
struct TokenBatch {
  int64_t batch = 0, seq_len = 0;
  std::vector<int64_t> input_ids, token_type_ids;  // [batch * seq_len]
  std::vector<int64_t> lengths;                    // [batch]

  // Pads to the longest encoding in the batch.
  static TokenBatch from_encodings(const std::vector<const Encoding*>& encodings, int32_t pad_id);
};

// What a forward returns beside every layer's attention.
struct ForwardOutputs {
  bool hidden_states = false;
  bool value_norms = false;
  // Each example's maps n x n, packed after the previous example's (EncoderOutput::attention), where every
  // layer's attention is the plain kernel's; the padded layout otherwise.
  bool compact_attention = false;
};

// Leaves the values of a resize uninitialised (no memset of buffers the forward writes in full anyway).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct EncoderOutput {
  int64_t batch = 0, layers = 0, heads = 0, seq_len = 0, hidden_size = 0;
  // [layer]: the keys each query sees (ModelConfig::key_range); the attention outside is exactly 0.
  std::vector<KeyRange> key_ranges;
  // [batch][layer][head][query][key], padded to seq_len. For example b only the leading
  // lengths[b] x lengths[b] block is meaningful; rows sum to 1 over real keys, padded keys get 0.
  // Compact (compact_examples not empty): example b's [layer][head] maps of n_b x n_b from its start.
  std::vector<float, UninitializedAllocator<float>> attention;
  struct CompactExample {
    std::size_t start = 0;  // in attention
    int64_t n = 0;
  };
  std::vector<CompactExample> compact_examples;
  // [layer + 1][batch][seq_len][hidden] (embeddings output, then every layer); empty unless requested.
  std::vector<float> hidden_states;
  // [batch][layer][head][key]: ||f_h(x_j)||, the norm of token j's value vector transformed by head h
  // (value projection with its bias, then head h's slice of the output projection; the output bias,
  // the same for every token, is left out) (Kobayashi et al. 2020). 0 for padding; empty unless requested.
  std::vector<float> value_norms;

  // The row stride of example b's maps (n x n at the top left of each): seq_len, or n_b where compact.
  int64_t attention_stride(int64_t b) const {
    return compact_examples.empty() ? seq_len : compact_examples[static_cast<std::size_t>(b)].n;
  }
  const float* attention_at(int64_t b, int64_t layer, int64_t head) const {
    const int64_t s = attention_stride(b);
    const std::size_t start = compact_examples.empty() ? static_cast<std::size_t>(b * layers * heads * s * s)
                                                       : compact_examples[static_cast<std::size_t>(b)].start;
    return attention.data() + start + static_cast<std::size_t>((layer * heads + head) * s * s);
  }
  float* attention_at(int64_t b, int64_t layer, int64_t head) {
    return const_cast<float*>(static_cast<const EncoderOutput&>(*this).attention_at(b, layer, head));
  }
  const float* value_norms_at(int64_t b, int64_t layer, int64_t head) const {
    return value_norms.data() + (((b * layers + layer) * heads + head) * seq_len);
  }
};

// What head_importance computes for each row of a batch (docs/analyses.md, "Does the head matter?").
// Each head h of layer l has a gate xi[l][h] that multiplies its attention probabilities before they
// meet the values (Hugging Face's head_mask); stored attention is always ungated.
struct ImportanceRequest {
  // D[l][h] = 1 - cos(e, e_-lh): e the mean over the row's tokens of the last layer's hidden state,
  // e_-lh the same with xi[l][h] = 0 (every other gate 1).
  bool ablation = false;
  // I[l][h] = |dL/dxi[l][h]| at xi = 1 (Michel et al. 2019), L the loss of the encoder's task head.
  bool gradient = false;
  std::vector<int64_t> labels;  // classification: each row's class
  // mlm: each row's positions replaced by mask_id, whose original ids are the targets (no position: NaN)
  std::vector<std::vector<int64_t>> masked;
  int64_t mask_id = -1;
};

struct HeadImportance {
  int64_t batch = 0, layers = 0, heads = 0;
  std::vector<float> ablation, gradient;  // [batch][layer][head], empty unless requested
};

// Context mixing (docs/analyses.md, "Context mixing"): how much token j contributes to token i's
// representation in each layer, beyond the attention weights. Each map is [layer][i][j] per row,
// i the receiving token, every row summing to 1.
struct MixingRequest {
  // VZ_l[i][j] = 1 - cos(y_i, y_i^(-j)): y the layer's output, y^(-j) the same with token j's value
  // vectors zeroed in every head (Mohebbi et al. 2023).
  bool value_zeroing = false;
  // c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1): y the attention block's output (after its
  // LayerNorm), T_i(x_j) x_j's part of it, the LayerNorm taken as linear (Ferrando et al. 2022).
  bool alti = false;
};

struct ContextMixing {
  int64_t batch = 0, layers = 0;
  // Per row b: [layers][n_b][n_b] (n_b = lengths[b], no padding); empty unless requested.
  std::vector<std::vector<float>> value_zeroing, alti;
};

class Transformer {
 public:
  // `head`: the task head gradient importance differentiates (none: head_importance computes ablation only).
  Transformer(const LoadedModel& model, const EncoderOptions& options, const TaskHead* head = nullptr);
  ~Transformer();
  Transformer(const Transformer&) = delete;
  Transformer& operator=(const Transformer&) = delete;

  // Thread-safe: concurrent calls on different batches are allowed.
  EncoderOutput forward(const TokenBatch& batch, ForwardOutputs want = {}) const;
  // Head importance of each row (ImportanceRequest), rows of equal length computed together without
  // padding. Ablation recomputes only the layers from l up, all heads of a layer at once; the gradient
  // is one forward and backward pass. Thread-safe as forward is; gradient needs precision fp32 and the
  // encoder built with a head.
  HeadImportance head_importance(const TokenBatch& batch, const ImportanceRequest& request) const;

  // Context mixing of each row (MixingRequest), rows of equal length computed together without
  // padding. Value zeroing recomputes each layer once per token (n variants at once); ALTI
  // decomposes each layer's attention block. Thread-safe as forward is.
  ContextMixing context_mixing(const TokenBatch& batch, const MixingRequest& request) const;

  const ModelConfig& config() const;
  const EncoderOptions& options() const;
  // Floating-point operations that forward() executes on a padded batch without padding between
  // examples (multiply-add = 2): the GEMMs (QKV, QK^T, PV, attention output, FFN) of every layer,
  // except that without hidden states the last layer stops after QK^T (nothing else of it reaches
  // any attention). Embedding lookups, LayerNorms, softmax and activations are not counted.
  double flops(int64_t batch, int64_t seq_len, bool hidden_states = false) const;

  struct Impl;  // LibTorch's side (encoder_impl.hpp), opaque here

 private:
  std::unique_ptr<Impl> impl_;
};

// Threads LibTorch uses for intra-op work in the calling thread (0 = all cores).
void set_compute_threads(int threads);

}  // namespace attnscan
