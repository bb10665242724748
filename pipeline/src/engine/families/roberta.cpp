// RoBERTa and XLM-RoBERTa: BERT's encoder and tensor names under "roberta." and positions that start
// after the padding id (padding_idx + 1), as MPNet's. One token type (all 0).
#include "engine/config_fields.hpp"
#include "engine/families/family.hpp"

namespace attnscan {

namespace {

BertConfig read_roberta(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  BertConfig c;
  read_bert_like(j, file, c);
  read_bert_embeddings(j, file, c);
  c.position_offset = field_or<int64_t>(j, file, "pad_token_id", 1) + 1;
  if (c.max_tokens() <= 0)
    throw ModelError(file.string() + ": max_position_embeddings " + std::to_string(c.max_position_embeddings) +
                     " leaves no positions after pad_token_id + 1");
  return c;
}

const std::vector<std::string> kUnused = {"embeddings.position_ids", "embeddings.token_type_ids", "pooler.",
                                          "lm_head.", "classifier.", "qa_outputs."};

}  // namespace

const ModelFamily& roberta_family() {
  static const ModelFamily f{
      "roberta", "RoBERTa (RobertaModel and its task checkpoints)", read_roberta, {"roberta."}, {}, kUnused};
  return f;
}

const ModelFamily& xlm_roberta_family() {
  static const ModelFamily f{
      "xlm-roberta", "XLM-RoBERTa (XLMRobertaModel and its task checkpoints)", read_roberta, {"roberta."}, {}, kUnused};
  return f;
}

}  // namespace attnscan
