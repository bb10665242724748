#pragma once
// Hyper-parameters of a Hugging Face BERT-family checkpoint (config.json, read by its family), validated
// on load. (The tokenizer's settings: tokenizer/tokenizer_config.hpp.)
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/layer_spec.hpp"

namespace attnscan {

struct ModelConfig {
  std::string model_type = "bert";
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t intermediate_size = 0;
  int64_t max_position_embeddings = 0;
  int64_t type_vocab_size = 0;
  double layer_norm_eps = 1e-12;
  Activation activation = Activation::GeluErf;
  std::string activation_name = "gelu";
  // What the family's architecture does, set by its loader (model/families/); the encoder has no
  // per-family branches.
  int64_t embedding_size = 0;              // embedding width
  bool project_embeddings = false;         // a linear layer maps embeddings to hidden_size (ELECTRA when
                                           // narrower, ALBERT always)
  bool token_types = true;                 // token type embeddings exist (BERT, ELECTRA; not DistilBERT, MPNet)
  int64_t position_offset = 0;             // position id of the first token (MPNet, RoBERTa: padding_idx + 1)
  int64_t relative_attention_buckets = 0;  // MPNet's relative position bias buckets; 0: none
  int64_t relative_attention_max_distance = 128;
  // How QK^T is scaled by 1/sqrt(d), in the order the family's reference code computes it (the rounding differs).
  using ScoreScaling = attnscan::ScoreScaling;  // BERT: divide scores; DistilBERT: queries; ModernBERT: multiply
  ScoreScaling score_scaling = ScoreScaling::DivideScores;
  int64_t shared_layer_groups = 0;         // ALBERT: layers share the weights of this many groups; 0: none
  bool absolute_positions = true;          // position embeddings added to the input (DeBERTa: position_biased_input)
  // ModernBERT's block: pre-norm layers (the first without its attention norm) and a final norm; one fused
  // Wqkv; a gated FFN (GeGLU: the intermediate projection gives [a | g], the output projection reads
  // act(a) * g); biases only where the config asks for them.
  bool pre_norm = false;
  bool fused_qkv = false;
  bool gated_ffn = false;
  bool attention_bias = true, ffn_bias = true, norm_bias = true;
  // Rotary positions (global_theta > 0) on queries and keys, and sliding-window layers: layer l is local
  // when global_every > 0 and l % global_every != 0; a local layer's query i sees keys |i - j| <= local_window / 2
  // and rotates with local_theta.
  double global_theta = 0, local_theta = 0;
  int64_t global_every = 0, local_window = 0;
  bool is_local(int64_t layer) const { return global_every > 0 && layer % global_every != 0; }
  // The keys a query of `layer` sees: its LayerSpec's, or |i - j| <= local_window / 2 in a local layer, or all.
  KeyRange key_range(int64_t layer) const {
    if (described_by_layers()) return layer_spec(layer).attention.keys;
    return is_local(layer) ? KeyRange{local_window / 2, local_window / 2} : KeyRange::all();
  }
  bool has_local_layers() const { return global_every > 1 && num_layers > 1; }
  bool norm_after_projection = false;      // DeBERTa: embed_proj (no bias) first, then the LayerNorm over hidden_size

  // DeBERTa-v2/v3's disentangled attention: the scores add content-to-position (c2p: query . position key)
  // and position-to-content (p2c: key . position query) terms, looked up by relative-position bucket.
  struct Disentangled {
    bool on = false;        // DeBERTa's attention: scale sqrt(head_dim * terms()), applied to the keys
    bool relative = false;  // relative_attention: rel_embeddings exist and c2p/p2c are added
    bool c2p = false, p2c = false;       // pos_att_type
    int64_t position_buckets = 0;        // > 0: log buckets (make_log_bucket_position); else raw distances
    int64_t max_relative_positions = 0;  // distances beyond it share the last bucket
    bool share_att_key = false;          // position keys/queries through the content key/query projections
    bool norm_rel_embeddings = false;    // norm_rel_ebd layer_norm: rel_embeddings through encoder.LayerNorm
    int64_t span() const { return position_buckets > 0 ? position_buckets : max_relative_positions; }
    int64_t terms() const { return 1 + (c2p ? 1 : 0) + (p2c ? 1 : 0); }
    bool adds_c2p() const { return relative && c2p; }
    bool adds_p2c() const { return relative && p2c; }
  } disentangled;

  // Families described layer by layer (the decoders): one LayerSpec per layer, which the layer stack
  // (encoder/layer_stack.cpp) runs; the fields above then hold only the sizes. Empty for the encoder families,
  // which the fields above describe.
  std::vector<LayerSpec> layer_specs;
  double embedding_scale = 0;     // the token embeddings times this (Gemma: sqrt(hidden_size)); 0: none
  NormSpec final_norm;            // the norm after the last layer (layer-spec families)
  bool tied_lm_head = false;      // the LM head is the token embeddings (tie_word_embeddings)
  bool described_by_layers() const { return !layer_specs.empty(); }
  const LayerSpec& layer_spec(int64_t layer) const { return layer_specs.at(static_cast<std::size_t>(layer)); }

  int64_t head_dim() const { return hidden_size / num_heads; }
  // Layers whose weights the checkpoint stores, and the one layer `layer` computes with (ALBERT's
  // num_hidden_groups: layer i uses group floor(i * groups / layers)).
  int64_t stored_layers() const { return shared_layer_groups > 0 ? shared_layer_groups : num_layers; }
  int64_t stored_layer(int64_t layer) const { return layer * stored_layers() / num_layers; }
  int64_t max_tokens() const { return max_position_embeddings - position_offset; }  // longest sequence
};

// Reads and validates DIR/config.json through the family its model_type names. Throws ModelError
// naming the file and the field (or the supported families).
ModelConfig load_model_config(const std::filesystem::path& config_json);

// A short human-readable summary, e.g. "bert 6x12 hidden 384".
std::string describe(const ModelConfig& c);

}  // namespace attnscan
