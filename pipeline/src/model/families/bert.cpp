// BERT: BertModel and its task checkpoints (BertForMaskedLM, BertForSequenceClassification, ...),
// the canonical names every other family maps onto.
#include "model/families/config_fields.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

ModelConfig read_bert(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  ModelConfig c;
  read_bert_like(j, file, c);
  read_bert_embeddings(j, file, c);
  return c;
}

}  // namespace

const ModelFamily& bert_family() {
  static const ModelFamily f{
      "bert",
      "BERT (BertModel and its task checkpoints; MiniLM and other BERT-shaped models)",
      read_bert,
      {"bert."},
      {},
      {"embeddings.position_ids", "embeddings.token_type_ids", "pooler.", "cls.", "classifier.", "qa_outputs."},
      TemplateKind::Bert,
      SentencePieceFlavour::None,
      // BertForSequenceClassification: tanh pooler on [CLS], then the classifier
      {"pooler.dense.weight", "pooler.dense.bias", HeadActivation::Tanh, "", "", 0, "classifier.weight",
       "classifier.bias"},
      // BertForMaskedLM: transform (dense, hidden_act, LayerNorm), decoder tied to the word embeddings
      {"cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias", HeadActivation::Encoder,
       "cls.predictions.transform.LayerNorm.weight|cls.predictions.transform.LayerNorm.gamma",
       "cls.predictions.transform.LayerNorm.bias|cls.predictions.transform.LayerNorm.beta", 0,
       "cls.predictions.decoder.weight", "cls.predictions.bias|cls.predictions.decoder.bias"},
  };
  return f;
}

}  // namespace attnscan
