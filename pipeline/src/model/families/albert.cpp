// ALBERT: factorised embeddings (embedding_size, projected to the hidden size as ELECTRA's) and
// layers that share the weights of num_hidden_groups groups. Every released checkpoint has one layer
// per group (inner_group_num 1); other values are refused.
#include "model/families/config_fields.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

ModelConfig read_albert(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  ModelConfig c;
  read_bert_like(j, file, c);
  set_activation(c, field_or<std::string>(j, file, "hidden_act", "gelu_new"), file, "hidden_act");  // AlbertConfig's default
  read_bert_embeddings(j, file, c);
  c.embedding_size = positive(j, file, "embedding_size");
  c.project_embeddings = true;  // embedding_hidden_mapping_in exists whatever the sizes
  c.shared_layer_groups = field_or<int64_t>(j, file, "num_hidden_groups", 1);
  if (c.shared_layer_groups <= 0 || c.shared_layer_groups > c.num_layers)
    throw ModelError(file.string() + ": num_hidden_groups must be between 1 and num_hidden_layers, got " +
                     std::to_string(c.shared_layer_groups));
  if (auto inner = field_or<int64_t>(j, file, "inner_group_num", 1); inner != 1)
    throw ModelError(file.string() + ": inner_group_num " + std::to_string(inner) +
                     " is not supported (attnscan runs ALBERT with one layer per group, as every released checkpoint)");
  return c;
}

}  // namespace

const ModelFamily& albert_family() {
  static const ModelFamily f{
      "albert",
      "ALBERT (AlbertModel and its task checkpoints; shared layers, factorised embeddings)",
      read_albert,
      {"albert."},
      {{"encoder.embedding_hidden_mapping_in.", "embeddings_project."},
       {"encoder.albert_layer_groups.", "encoder.layer."},  // group g: stored layer g
       {".albert_layers.0.attention.query.", ".attention.self.query."},
       {".albert_layers.0.attention.key.", ".attention.self.key."},
       {".albert_layers.0.attention.value.", ".attention.self.value."},
       {".albert_layers.0.attention.dense.", ".attention.output.dense."},
       {".albert_layers.0.attention.LayerNorm.", ".attention.output.LayerNorm."},
       {".albert_layers.0.ffn.", ".intermediate.dense."},
       {".albert_layers.0.ffn_output.", ".output.dense."},
       {".albert_layers.0.full_layer_layer_norm.", ".output.LayerNorm."}},
      {"embeddings.position_ids", "embeddings.token_type_ids", "pooler.", "predictions.", "sop_classifier.",
       "classifier.", "qa_outputs."},
      TemplateKind::Bert,
      SentencePieceFlavour::Albert,
      {"pooler.weight", "pooler.bias", HeadActivation::Tanh, "", "", 0, "classifier.weight", "classifier.bias"},
      {"predictions.dense.weight", "predictions.dense.bias", HeadActivation::Encoder, "predictions.LayerNorm.weight",
       "predictions.LayerNorm.bias", 0, "predictions.decoder.weight", "predictions.bias|predictions.decoder.bias"},
  };
  return f;
}

}  // namespace attnscan
