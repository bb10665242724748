// DistilBERT: BERT without token types, its own tensor names, and q scaled by 1/sqrt(d) before QK^T.
#include "model/families/config_fields.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

ModelConfig read_distilbert(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  ModelConfig c;
  c.vocab_size = positive(j, file, "vocab_size");
  c.hidden_size = positive(j, file, "dim");
  c.num_layers = positive(j, file, "n_layers");
  c.num_heads = positive(j, file, "n_heads");
  c.intermediate_size = positive(j, file, "hidden_dim");
  c.max_position_embeddings = positive(j, file, "max_position_embeddings");
  c.layer_norm_eps = 1e-12;  // fixed in DistilBERT's modelling code
  c.token_types = false;
  c.type_vocab_size = 0;
  c.score_scaling = ModelConfig::ScoreScaling::DivideQueries;
  set_activation(c, field_or<std::string>(j, file, "activation", "gelu"), file, "activation");
  if (c.hidden_size % c.num_heads != 0)
    throw ModelError(file.string() + ": dim " + std::to_string(c.hidden_size) + " is not a multiple of n_heads " +
                     std::to_string(c.num_heads));
  c.embedding_size = c.hidden_size;
  return c;
}

}  // namespace

const ModelFamily& distilbert_family() {
  static const ModelFamily f{
      "distilbert",
      "DistilBERT (DistilBertModel and its task checkpoints)",
      read_distilbert,
      {"distilbert."},
      {{"transformer.layer.", "encoder.layer."},
       {".attention.q_lin.", ".attention.self.query."},
       {".attention.k_lin.", ".attention.self.key."},
       {".attention.v_lin.", ".attention.self.value."},
       {".attention.out_lin.", ".attention.output.dense."},
       {".sa_layer_norm.", ".attention.output.LayerNorm."},
       {".ffn.lin1.", ".intermediate.dense."},
       {".ffn.lin2.", ".output.dense."},
       {".output_layer_norm.", ".output.LayerNorm."}},
      {"embeddings.position_ids", "vocab_transform.", "vocab_layer_norm.", "vocab_projector.", "pre_classifier.",
       "classifier.", "qa_outputs."},
      TemplateKind::Bert,
      SentencePieceFlavour::None,
      {"pre_classifier.weight", "pre_classifier.bias", HeadActivation::Relu, "", "", 0, "classifier.weight",
       "classifier.bias"},
      // vocab_layer_norm has eps 1e-12 whatever the config says
      {"vocab_transform.weight", "vocab_transform.bias", HeadActivation::Encoder, "vocab_layer_norm.weight",
       "vocab_layer_norm.bias", 1e-12, "vocab_projector.weight", "vocab_projector.bias"},
  };
  return f;
}

}  // namespace attnscan
