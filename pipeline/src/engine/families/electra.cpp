// ELECTRA: discriminator and generator checkpoints. BERT's encoder; the embeddings may be narrower
// than the hidden size (embedding_size), with a linear projection (embeddings_project) between.
#include "engine/config_fields.hpp"
#include "engine/families/family.hpp"

namespace attnscan {

namespace {

BertConfig read_electra(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  BertConfig c;
  read_bert_like(j, file, c);
  c.type_vocab_size = positive(j, file, "type_vocab_size");
  c.embedding_size = field_or<int64_t>(j, file, "embedding_size", c.hidden_size);
  if (c.embedding_size <= 0) throw ModelError(file.string() + ": field 'embedding_size' must be positive");
  auto pos_type = field_or<std::string>(j, file, "position_embedding_type", "absolute");
  if (pos_type != "absolute")
    throw ModelError(file.string() + ": unsupported position_embedding_type '" + pos_type + "' (supported: absolute)");
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
  };
  return f;
}

}  // namespace attnscan
