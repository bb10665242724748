// ELECTRA: discriminator and generator checkpoints. BERT's encoder; the embeddings may be narrower
// than the hidden size (embedding_size), with a linear projection (embeddings_project) between.
#include "model/families/config_fields.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

ModelConfig read_electra(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  ModelConfig c;
  read_bert_like(j, file, c);
  read_bert_embeddings(j, file, c);
  c.embedding_size = field_or<int64_t>(j, file, "embedding_size", c.hidden_size);
  if (c.embedding_size <= 0) throw ModelError(file.string() + ": field 'embedding_size' must be positive");
  c.project_embeddings = c.embedding_size != c.hidden_size;  // ElectraEmbeddings projects only then
  return c;
}

}  // namespace

const ModelFamily& electra_family() {
  static const ModelFamily f{
      "electra",
      "ELECTRA (ElectraModel; discriminator and generator checkpoints)",
      read_electra,
      {"electra."},
      {},
      {"embeddings.position_ids", "embeddings.token_type_ids", "discriminator_predictions.",
       "generator_predictions.", "generator_lm_head.", "classifier.", "qa_outputs."},
      TemplateKind::Bert,
      SentencePieceFlavour::None,
      // ElectraClassificationHead: gelu, not tanh
      {"classifier.dense.weight", "classifier.dense.bias", HeadActivation::GeluErf, "", "", 0,
       "classifier.out_proj.weight", "classifier.out_proj.bias"},
      // the generator's head (ElectraForMaskedLM)
      {"generator_predictions.dense.weight", "generator_predictions.dense.bias", HeadActivation::GeluErf,
       "generator_predictions.LayerNorm.weight", "generator_predictions.LayerNorm.bias", 0,
       "generator_lm_head.weight", "generator_lm_head.bias"},
  };
  return f;
}

}  // namespace attnscan
