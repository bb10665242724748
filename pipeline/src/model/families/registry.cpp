// The model families attnscan runs: one line each.
#include "common/error.hpp"
#include "model/families/family.hpp"

namespace attnscan {

const std::vector<const ModelFamily*>& model_families() {
  static const std::vector<const ModelFamily*> families = {
      &bert_family(),
      &roberta_family(),
      &xlm_roberta_family(),
      &distilbert_family(),
      &electra_family(),
      &albert_family(),
      &mpnet_family(),
      &deberta_v2_family(),
      &modernbert_family(),
      &gpt2_family(),
      &llama_family(),
      &mistral_family(),
      &qwen2_family(),
      &qwen3_family(),
      &gemma3_text_family(),
      &gpt_neox_family(),
  };
  return families;
}

ModelFamily layer_family(std::string model_type, std::string description,
                         ModelConfig (*read_config)(const nlohmann::json&, const std::filesystem::path&),
                         std::vector<std::string> prefixes, std::vector<std::string> unused,
                         TensorMap (*tensor_map)(const ModelConfig&)) {
  ModelFamily f;
  f.model_type = std::move(model_type);
  f.description = std::move(description);
  f.read_config = read_config;
  f.prefixes = std::move(prefixes);
  f.unused = std::move(unused);
  f.tensor_map = tensor_map;
  f.pairs = PairEncoding::Joined;
  f.preferred_tokenizer = TokenizerFile::TokenizerJson;
  return f;
}

const ModelFamily& find_family(const std::string& model_type, const std::filesystem::path& config_file) {
  std::string supported;
  for (const auto* f : model_families()) {
    if (f->model_type == model_type) return *f;
    supported += (supported.empty() ? "'" : ", '") + f->model_type + "'";
  }
  throw ModelError(config_file.string() + ": unsupported architecture model_type '" + model_type +
                   "' (attnscan supports " + supported + "; docs/models.md says how to add a family)");
}

}  // namespace attnscan
