#pragma once
// What one transformer layer computes, as its family's config.json describes it: the attention (heads, sizes,
// biases, query/key norms, rotary positions, which keys each query sees), where its norms sit and of which
// kind, and its feed-forward block. A family fills one LayerSpec per layer (model/families/); the forward
// (encoder/layer_stack.cpp) reads nothing else about the layer.
#include <cstdint>
#include <string>

namespace attnscan {

enum class Activation { GeluErf, GeluTanh, Relu, Silu };

// The keys query i sees: i - before <= j <= i + after, each side unbounded where -1.
struct KeyRange {
  int64_t before = -1, after = -1;

  static KeyRange all() { return {}; }
  static KeyRange causal() { return {-1, 0}; }
  // Hugging Face's sliding window of a decoder: the query and the window - 1 keys before it.
  static KeyRange causal_window(int64_t window) { return {window - 1, 0}; }
  bool sees(int64_t query, int64_t key) const {
    return (before < 0 || key >= query - before) && (after < 0 || key <= query + after);
  }
  bool is_all() const { return before < 0 && after < 0; }
  bool operator==(const KeyRange& o) const { return before == o.before && after == o.after; }
};

// Rotary positions as Hugging Face's modeling_rope_utils computes their inverse frequencies.
enum class RopeType { None, Default, Linear, Dynamic, Yarn, Llama3 };

struct RopeSpec {
  RopeType type = RopeType::None;
  double theta = 0;
  int64_t dims = 0;              // the rotated leading dimensions of a head (partial rotary: fewer than head_dim)
  double factor = 1;             // linear, dynamic, yarn, llama3
  double low_freq_factor = 1, high_freq_factor = 4;  // llama3
  int64_t original_max_positions = 0;               // yarn, llama3
  double attention_factor = -1;  // yarn: the cos/sin scale; -1: from factor and mscale, as HF infers it
  double beta_fast = 32, beta_slow = 1, mscale = 0, mscale_all_dim = 0;  // yarn
  bool truncate = true;                                                 // yarn
  bool on() const { return type != RopeType::None; }
};

// How q k^T is scaled, in the order the family's reference code computes it (the rounding differs).
enum class ScoreScaling { DivideScores, DivideQueries, MultiplyScores };

struct AttentionSpec {
  int64_t heads = 0, kv_heads = 0, head_dim = 0;  // kv_heads < heads: grouped-query attention
  bool qkv_bias = false, out_bias = false;
  bool qk_norm = false;  // an RMS norm over each head's query and key (Qwen3, Gemma 3), before the rotation
  ScoreScaling scaling = ScoreScaling::MultiplyScores;
  double scale = 0;      // the factor on q k^T; 0: 1 / sqrt(head_dim)
  KeyRange keys;
  RopeSpec rope;
  int64_t width() const { return (heads + 2 * kv_heads) * head_dim; }  // of the q|k|v projection
};

enum class NormKind { Layer, Rms, RmsOnePlusWeight };  // RmsOnePlusWeight: Gemma's x * (1 + w)
// Post: x = norm(x + f(x)) (BERT); Pre: x = x + f(norm(x)) (GPT-2, Llama); Sandwich: x = x + norm(f(norm(x)))
// (Gemma 3); Parallel: x = x + attn(norm1(x)) + ffn(norm2(x)) (GPT-NeoX's use_parallel_residual).
enum class NormPlacement { Post, Pre, Sandwich, Parallel };

struct NormSpec {
  NormKind kind = NormKind::Layer;
  NormPlacement placement = NormPlacement::Post;
  double eps = 1e-12;
  bool bias = true;  // LayerNorm only
};

enum class FfnKind { Plain, Gated };  // Gated: down(act(gate(x)) * up(x))

struct FfnSpec {
  FfnKind kind = FfnKind::Plain;
  Activation activation = Activation::GeluErf;
  int64_t intermediate = 0;
  bool bias = true;
};

struct LayerSpec {
  AttentionSpec attention;
  NormSpec norm;
  FfnSpec ffn;
};

// The name a config.json gives an activation -> Activation; false where attnscan has none of that name.
bool activation_named(const std::string& name, Activation& out);

}  // namespace attnscan
