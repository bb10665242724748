// DeBERTa-v2 and v3 (model_type deberta-v2): disentangled attention over relative-position buckets
// (ModelConfig::Disentangled), position embeddings only with position_biased_input, token types only with
// type_vocab_size > 0, and embeddings projected (embed_proj, no bias) before their LayerNorm. v2's
// convolution beside the first layer (conv_kernel_size) is refused.
#include <algorithm>
#include <cctype>

#include "model/families/config_fields.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

// pos_att_type: a list, or a string "p2c|c2p" as DebertaV2Config accepts it.
void read_pos_att_type(const nlohmann::json& j, const std::filesystem::path& file, ModelConfig::Disentangled& d) {
  std::vector<std::string> types;
  if (j.contains("pos_att_type") && !j["pos_att_type"].is_null()) {
    const auto& v = j["pos_att_type"];
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      for (std::size_t at = 0; at <= s.size();) {
        const std::size_t bar = std::min(s.find('|', at), s.size());
        std::string t = s.substr(at, bar - at);
        t.erase(0, t.find_first_not_of(' '));
        t.erase(t.find_last_not_of(' ') + 1);
        std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
        if (!t.empty()) types.push_back(t);
        at = bar + 1;
      }
    } else if (v.is_array()) {
      for (const auto& t : v) {
        if (!t.is_string()) throw ModelError(file.string() + ": field 'pos_att_type' must list strings");
        types.push_back(t.get<std::string>());
      }
    } else {
      throw ModelError(file.string() + ": field 'pos_att_type' must be a list or a string like \"p2c|c2p\"");
    }
  }
  for (const auto& t : types) {
    if (t == "c2p") d.c2p = true;
    else if (t == "p2c") d.p2c = true;
    else throw ModelError(file.string() + ": pos_att_type '" + t + "' is not supported (supported: c2p, p2c)");
  }
}

ModelConfig read_deberta_v2(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace config_fields;
  ModelConfig c;
  read_bert_like(j, file, c);
  c.layer_norm_eps = field_or<double>(j, file, "layer_norm_eps", 1e-7);  // DebertaV2Config's default
  if (!(c.layer_norm_eps > 0)) throw ModelError(file.string() + ": field 'layer_norm_eps' must be positive");
  if (auto conv = field_or<int64_t>(j, file, "conv_kernel_size", 0); conv > 0)
    throw ModelError(file.string() + ": conv_kernel_size " + std::to_string(conv) +
                     " is not supported (DeBERTa-v2's convolution beside the first layer; v3 checkpoints have none)");
  if (j.contains("attention_head_size") && field_or<int64_t>(j, file, "attention_head_size", 0) != c.head_dim())
    throw ModelError(file.string() + ": attention_head_size other than hidden_size / num_attention_heads is not supported");
  c.type_vocab_size = field_or<int64_t>(j, file, "type_vocab_size", 0);
  if (c.type_vocab_size < 0) throw ModelError(file.string() + ": field 'type_vocab_size' must not be negative");
  c.token_types = c.type_vocab_size > 0;
  c.absolute_positions = field_or<bool>(j, file, "position_biased_input", true);
  c.embedding_size = field_or<int64_t>(j, file, "embedding_size", c.hidden_size);
  if (c.embedding_size <= 0) throw ModelError(file.string() + ": field 'embedding_size' must be positive");
  c.project_embeddings = c.embedding_size != c.hidden_size;
  c.norm_after_projection = true;
  auto& d = c.disentangled;
  d.on = true;
  d.relative = field_or<bool>(j, file, "relative_attention", false);
  read_pos_att_type(j, file, d);
  d.position_buckets = field_or<int64_t>(j, file, "position_buckets", -1);
  d.max_relative_positions = field_or<int64_t>(j, file, "max_relative_positions", -1);
  if (d.max_relative_positions < 1) d.max_relative_positions = c.max_position_embeddings;
  d.share_att_key = field_or<bool>(j, file, "share_att_key", false);
  const auto norm = field_or<std::string>(j, file, "norm_rel_ebd", "none");
  d.norm_rel_embeddings = norm.find("layer_norm") != std::string::npos;
  return c;
}

}  // namespace

const ModelFamily& deberta_v2_family() {
  static const ModelFamily f{
      "deberta-v2",
      "DeBERTa-v2/v3 (DebertaV2Model and its task checkpoints; disentangled relative attention)",
      read_deberta_v2,
      {"deberta."},
      {{".attention.self.query_proj.", ".attention.self.query."},
       {".attention.self.key_proj.", ".attention.self.key."},
       {".attention.self.value_proj.", ".attention.self.value."},
       {"embeddings.embed_proj.", "embeddings_project."}},
      {"embeddings.position_ids", "pooler.", "classifier.", "lm_predictions.", "cls.", "mask_predictions."},
      TemplateKind::Bert,  // DebertaV2Tokenizer: [CLS] A [SEP] B [SEP]
      SentencePieceFlavour::Deberta,
      {},  // gradient importance: no task head yet (its pooler's activation is a config field)
      {},
  };
  return f;
}

}  // namespace attnscan
