#pragma once
// What the encoder's two LibTorch translation units share (encoder.cpp: loading and the forward;
// head_importance.cpp: gates, ablation and gradients): the weights as tensors and one layer's steps.
// Not an interface: included by those two files only.
#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "encoder/encoder.hpp"
#include "model/task_heads.hpp"

namespace attnscan {

at::Tensor to_tensor(const TensorView& v);  // a float32 copy

struct Linear {
  at::Tensor weight;    // [out, in]; oneDNN layout when onednn
  at::Tensor bias;      // [out]
  bool onednn = false;  // else at::linear: the BLAS on CPU
  at::ScalarType compute = at::kFloat;

  at::Tensor operator()(const at::Tensor& x) const {  // x: [tokens, in] fp32 dense
    if (!onednn) return at::linear(x, weight, bias);
    // Gradients flow through dense tensors only (gradient importance, fp32): the weight made dense.
    if (x.requires_grad()) return at::linear(x, weight.to_dense(), bias);
    at::Tensor xin = compute == at::kFloat ? x.to_mkldnn() : x.to_mkldnn(compute);
    return at::mkldnn_linear(xin, weight, bias).to_dense(at::kFloat);
  }
};

Linear make_linear(at::Tensor w, at::Tensor b, const EncoderOptions& opt, const at::Device& dev);

struct Layer {
  Linear qkv, attn_out, inter, out;
  at::Tensor value_out;  // [heads, head_dim, hidden]: head h's slice of the output projection, transposed
  at::Tensor ln1_w, ln1_b, ln2_w, ln2_b;
};

// A task head's tensors (model/task_heads.hpp), float32 on the encoder's device.
struct HeadTensors {
  TaskHead head;
  at::Tensor dense_w, dense_b, norm_w, norm_b, out_w, out_b;
};

// QK^T / sqrt(d) in the order the family's reference code computes it (the rounding differs).
inline at::Tensor scaled_scores(const at::Tensor& q, const at::Tensor& k, double scale, bool scale_query_first) {
  if (scale_query_first) return at::matmul(q / scale, k);
  auto scores = at::matmul(q, k);
  scores.div_(scale);
  return scores;
}

// MPNet's (T5-style) bucket of each relative position k - q, as its reference code computes it.
at::Tensor relative_position_bucket(int64_t S, int64_t num_buckets, int64_t max_distance);

// LibTorch's errors carry a C++ backtrace in what(); a user gets one line: what attnscan was doing
// and LibTorch's message.
[[noreturn]] void throw_libtorch_error(const c10::Error& e, const std::string& doing);

struct BertEncoder::Impl {
  BertConfig cfg;
  EncoderOptions opt;
  at::Device device{at::kCPU};
  at::Tensor word, position, token_type, emb_ln_w, emb_ln_b;
  std::optional<Linear> embed_project;  // ELECTRA, ALBERT: embedding_size -> hidden_size
  at::Tensor relative_bias;             // MPNet: [buckets, heads]; undefined when the family has none
  std::vector<Layer> layers;            // one per stored layer (ALBERT's layers share them)
  std::optional<HeadTensors> head;      // the task head of gradient importance, when one was asked for

  at::Tensor position_bias(int64_t S) const;
  const Layer& layer(int64_t li) const { return layers[static_cast<std::size_t>(cfg.stored_layer(li))]; }

  void load(const LoadedModel& model);
  void load_head(const TaskHead& head);
  void check_batch(const TokenBatch& batch) const;
  // The embeddings' output, [B * S, hidden]: ids and types [B * S] on the device.
  at::Tensor embed(const at::Tensor& ids, const at::Tensor& types, int64_t B, int64_t S) const;
  // One layer after its attention: output projection, residual and LayerNorm, FFN, residual and
  // LayerNorm. ctx [B, heads, S, head_dim], x the layer's input [B * S, hidden].
  at::Tensor finish_layer(const Layer& L, const at::Tensor& ctx, const at::Tensor& x) const;
  EncoderOutput forward(const TokenBatch& batch, ForwardOutputs want) const;
  HeadImportance head_importance(const TokenBatch& batch, const ImportanceRequest& request) const;
};

}  // namespace attnscan
