// BERT: BertModel and its task checkpoints (BertForMaskedLM, BertForSequenceClassification, ...),
// the canonical names every other family maps onto.
#include "engine/config_fields.hpp"
#include "engine/families/family.hpp"

namespace attnscan {

namespace {

BertConfig read_bert(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  BertConfig c;
  read_bert_like(j, file, c);
  c.type_vocab_size = positive(j, file, "type_vocab_size");
  auto pos_type = field_or<std::string>(j, file, "position_embedding_type", "absolute");
  if (pos_type != "absolute")
    throw ModelError(file.string() + ": unsupported position_embedding_type '" + pos_type + "' (supported: absolute)");
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
