// RoBERTa and XLM-RoBERTa: BERT's encoder and tensor names under "roberta." and positions that start
// after the padding id (padding_idx + 1), as MPNet's. One token type (all 0).
#include "model/families/config_fields.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

ModelConfig read_roberta(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  ModelConfig c;
  read_bert_like(j, file, c);
  read_bert_embeddings(j, file, c);
  read_positions_after_padding(j, file, c);
  return c;
}

// RobertaClassificationHead and RobertaLMHead (XLM-R's are the same classes)
const TaskHeadSpec kClassification{"classifier.dense.weight", "classifier.dense.bias", HeadActivation::Tanh, "", "", 0,
                                   "classifier.out_proj.weight", "classifier.out_proj.bias"};
const TaskHeadSpec kMlm{"lm_head.dense.weight", "lm_head.dense.bias", HeadActivation::GeluErf, "lm_head.layer_norm.weight",
                        "lm_head.layer_norm.bias", 0, "lm_head.decoder.weight", "lm_head.bias|lm_head.decoder.bias"};
const std::vector<std::string> kUnused = {"embeddings.position_ids", "embeddings.token_type_ids", "pooler.",
                                          "lm_head.", "classifier.", "qa_outputs."};

}  // namespace

const ModelFamily& roberta_family() {
  static const ModelFamily f{
      "roberta", "RoBERTa (RobertaModel and its task checkpoints)", read_roberta, {"roberta."}, {}, kUnused,
      TemplateKind::Roberta, SentencePieceFlavour::None, kClassification, kMlm};
  return f;
}

const ModelFamily& xlm_roberta_family() {
  static const ModelFamily f{
      "xlm-roberta", "XLM-RoBERTa (XLMRobertaModel and its task checkpoints)", read_roberta, {"roberta."}, {}, kUnused,
      TemplateKind::Roberta, SentencePieceFlavour::XlmRoberta, kClassification, kMlm};
  return f;
}

}  // namespace attnscan
