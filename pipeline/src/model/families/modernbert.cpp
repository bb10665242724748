// ModernBERT (model_type modernbert): pre-norm layers with a final norm, rotary positions (global and
// local rope_theta), every global_attn_every_n_layers-th layer global and the others attending within a
// sliding window, GeGLU, no biases by default (attention_bias, mlp_bias, norm_bias), no token types.
#include "model/families/config_fields.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

ModelConfig read_modernbert(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  ModelConfig c;
  read_bert_like(j, file, c);  // ModernBertConfig names the activation and the norm's epsilon its own way
  set_activation(c, field_or<std::string>(j, file, "hidden_activation", "gelu"), file, "hidden_activation");
  c.layer_norm_eps = field_or<double>(j, file, "norm_eps", 1e-5);
  if (!(c.layer_norm_eps > 0)) throw ModelError(file.string() + ": field 'norm_eps' must be positive");
  c.token_types = false;
  c.type_vocab_size = 0;
  c.absolute_positions = false;
  c.pre_norm = c.fused_qkv = c.gated_ffn = true;
  c.attention_bias = field_or<bool>(j, file, "attention_bias", false);
  c.ffn_bias = field_or<bool>(j, file, "mlp_bias", false);
  c.norm_bias = field_or<bool>(j, file, "norm_bias", false);
  c.score_scaling = ModelConfig::ScoreScaling::MultiplyScores;
  c.global_theta = field_or<double>(j, file, "global_rope_theta", 160000.0);
  c.local_theta = j.contains("local_rope_theta") && j["local_rope_theta"].is_null()
                      ? c.global_theta  // none: the local layers rotate as the global ones
                      : field_or<double>(j, file, "local_rope_theta", 10000.0);
  if (!(c.global_theta > 0) || !(c.local_theta > 0))
    throw ModelError(file.string() + ": global_rope_theta and local_rope_theta must be positive");
  if (c.head_dim() % 2 != 0) throw ModelError(file.string() + ": rotary positions need an even head size");
  c.global_every = positive(j, file, "global_attn_every_n_layers");
  c.local_window = positive(j, file, "local_attention");
  return c;
}

}  // namespace

const ModelFamily& modernbert_family() {
  static const ModelFamily f{
      "modernbert",
      "ModernBERT (ModernBertModel and its task checkpoints; rotary, alternating global and local attention)",
      read_modernbert,
      {"model."},
      {{"embeddings.tok_embeddings.", "embeddings.word_embeddings."},
       {"embeddings.norm.", "embeddings.LayerNorm."},
       {"layers.", "encoder.layer."},
       {".attn.Wqkv.", ".attention.self.qkv."},
       {".attn.Wo.", ".attention.output.dense."},
       {".attn_norm.", ".attention.output.LayerNorm."},  // before the attention (pre-norm)
       {".mlp.Wi.", ".intermediate.dense."},
       {".mlp.Wo.", ".output.dense."},
       {".mlp_norm.", ".output.LayerNorm."},  // before the FFN
       {"final_norm.", "encoder.final_norm."}},
      {"head.", "decoder.", "classifier.", "drop."},
      TemplateKind::Bert,  // its tokenizer.json: [CLS] A [SEP] B [SEP]
      SentencePieceFlavour::None,
      {},  // gradient importance: no task head yet
      {},
  };
  return f;
}

}  // namespace attnscan
