#pragma once
// A model family: how its config.json maps to the encoder's configuration, how its checkpoint tensor
// names map to the canonical (BERT) names of tensor_names.hpp, and what its tokenizer files mean. One
// file per family in this folder; registry.cpp lists them. The encoder itself has no per-family branches: what differs
// (token types, position offset, embedding projection, relative position bias, query scaling) is in
// the ModelConfig the family fills.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "model/model_config.hpp"
#include "model/tensor_map.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/tokenizer_config.hpp"

namespace attnscan {

// A task head on top of the encoder, as the family's checkpoints name its tensors (model/task_heads.hpp
// loads it). Each name may list alternatives separated by '|' (e.g. LayerNorm weight|gamma); each is
// tried as written and with the family's prefix (the pooler of a task checkpoint: "bert.pooler...").
enum class HeadActivation { Tanh, Relu, GeluErf, Encoder };  // Encoder: the encoder's own activation
struct TaskHeadSpec {
  std::string dense_w, dense_b;  // the transform of the hidden state (the pooler for BERT/ALBERT)
  HeadActivation activation = HeadActivation::Tanh;
  std::string norm_w, norm_b;    // a LayerNorm after the activation (MLM heads); empty: none
  double norm_eps = 0;           // 0: the encoder's layer_norm_eps
  std::string out_w, out_b;      // the output layer; an MLM head's weight may be absent (tied to the word embeddings)
};

struct ModelFamily {
  std::string model_type;   // config.json's model_type
  std::string description;  // e.g. "DistilBERT (DistilBertModel and its task checkpoints)"
  ModelConfig (*read_config)(const nlohmann::json& config, const std::filesystem::path& file);
  std::vector<std::string> prefixes;                          // of task checkpoints, e.g. "bert."
  std::vector<std::pair<std::string, std::string>> renames;  // checkpoint name part -> canonical part
  std::vector<std::string> unused;  // name prefixes (prefix stripped) of tensors attention does not need
  // What its tokenizer files mean (model/model_tokenizer.hpp): the slow tokenizer's pair template and
  // the slow class that reads a SentencePiece *.model.
  TemplateKind slow_template = TemplateKind::Bert;
  SentencePieceFlavour sentencepiece = SentencePieceFlavour::None;
  // The heads gradient importance can differentiate (importance.gradient): a sequence classifier on
  // the first token, and the masked-LM head. Empty dense_w: the family has none.
  TaskHeadSpec classification, mlm;
  // Families described layer by layer (ModelConfig::layer_specs): where each tensor the layer stack reads is
  // stored (model/tensor_map.hpp). nullptr: the canonical names of tensor_names.hpp through `renames`.
  TensorMap (*tensor_map)(const ModelConfig& config) = nullptr;
  // How its tokenizer encodes a sentence pair (model/model_tokenizer.hpp): the pair template, or joined as one
  // text (the decoders, layer_family).
  PairEncoding pairs = PairEncoding::Template;
  // The tokenizer file it reads where a directory has several and `tokenizer: auto` is asked: Auto (the slow
  // files first, as the encoder families' slow tokenizers define them), or TokenizerJson (the decoders, whose
  // vocab.json + merges.txt would otherwise read as RoBERTa's).
  TokenizerFile preferred_tokenizer = TokenizerFile::Auto;
};

// A family described layer by layer (a decoder: its pairs are joined as one text): its model_type, description,
// config reader, task-model prefixes, the tensors it skips (a name prefix, or a suffix where it starts with '.')
// and its tensor map.
ModelFamily layer_family(std::string model_type, std::string description,
                         ModelConfig (*read_config)(const nlohmann::json&, const std::filesystem::path&),
                         std::vector<std::string> prefixes, std::vector<std::string> unused,
                         TensorMap (*tensor_map)(const ModelConfig&));

// The family of a model_type; throws ModelError naming `config_file` and the supported families.
const ModelFamily& find_family(const std::string& model_type, const std::filesystem::path& config_file);

// The registered families, in registry order.
const std::vector<const ModelFamily*>& model_families();

// Each family's definition, in its own file.
const ModelFamily& bert_family();
const ModelFamily& roberta_family();
const ModelFamily& xlm_roberta_family();
const ModelFamily& albert_family();
const ModelFamily& distilbert_family();
const ModelFamily& electra_family();
const ModelFamily& mpnet_family();
const ModelFamily& deberta_v2_family();
const ModelFamily& modernbert_family();
const ModelFamily& gpt2_family();
const ModelFamily& llama_family();
const ModelFamily& mistral_family();
const ModelFamily& qwen2_family();
const ModelFamily& qwen3_family();
const ModelFamily& gemma3_text_family();
const ModelFamily& gpt_neox_family();

}  // namespace attnscan
