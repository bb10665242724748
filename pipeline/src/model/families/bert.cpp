// BERT: BertModel and its task checkpoints (BertForMaskedLM, BertForSequenceClassification, ...),
// the canonical names every other family maps onto.
#include "model/families/config_fields.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

BertConfig read_bert(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  BertConfig c;
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
  };
  return f;
}

}  // namespace attnscan
