// MPNet: no token types, positions from padding_idx + 1 (as RoBERTa), and a relative position bias
// (bucketed, one value per head) added to the attention scores of every layer.
#include "model/families/config_fields.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

ModelConfig read_mpnet(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  ModelConfig c;
  read_bert_like(j, file, c);
  c.token_types = false;
  c.type_vocab_size = 0;
  read_positions_after_padding(j, file, c);
  c.relative_attention_buckets = field_or<int64_t>(j, file, "relative_attention_num_buckets", 32);
  if (c.relative_attention_buckets < 2) throw ModelError(file.string() + ": relative_attention_num_buckets must be >= 2");
  return c;
}

}  // namespace

const ModelFamily& mpnet_family() {
  static const ModelFamily f{
      "mpnet",
      "MPNet (MPNetModel and its task checkpoints; all-mpnet-base-v2)",
      read_mpnet,
      {"mpnet."},
      {{".attention.attn.q.", ".attention.self.query."},
       {".attention.attn.k.", ".attention.self.key."},
       {".attention.attn.v.", ".attention.self.value."},
       {".attention.attn.o.", ".attention.output.dense."},
       {".attention.LayerNorm.", ".attention.output.LayerNorm."}},
      {"embeddings.position_ids", "pooler.", "lm_head.", "classifier."},
      TemplateKind::Roberta,  // MPNetTokenizer: <s> A </s></s> B </s>
      SentencePieceFlavour::None,
      {"classifier.dense.weight", "classifier.dense.bias", HeadActivation::Tanh, "", "", 0,
       "classifier.out_proj.weight", "classifier.out_proj.bias"},
      {"lm_head.dense.weight", "lm_head.dense.bias", HeadActivation::GeluErf, "lm_head.layer_norm.weight",
       "lm_head.layer_norm.bias", 0, "lm_head.decoder.weight", "lm_head.bias|lm_head.decoder.bias"},
  };
  return f;
}

}  // namespace attnscan
