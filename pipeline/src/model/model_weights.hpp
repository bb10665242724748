#pragma once
// Loads a Hugging Face model directory of a BERT-family model (families: model/families/): config and
// validated weights (memory-mapped). Its tokenizer: model/model_tokenizer.hpp.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/model_config.hpp"
#include "model/safetensors.hpp"

namespace attnscan {

struct ModelFiles {
  std::filesystem::path dir, config_json, weights;
};

// Locates the files of a model directory; throws ModelError naming what is missing.
ModelFiles locate_model_files(const std::filesystem::path& dir);

class BertWeights {
 public:
  // Validates every required tensor against the canonical table. All problems (missing, unexpected,
  // wrong shape, wrong dtype) are collected and reported in one ModelError naming the file and each
  // tensor. Accepts names with or without the "bert." prefix and LayerNorm gamma/beta aliases.
  BertWeights(std::shared_ptr<const SafetensorsFile> file, const BertConfig& config);

  const TensorView& get(const std::string& canonical_name) const;
  const SafetensorsFile& file() const { return *file_; }
  // Tensors present in the file but not used (pooler, MLM or classifier heads), original names.
  const std::vector<std::string>& ignored() const { return ignored_; }

 private:
  std::shared_ptr<const SafetensorsFile> file_;
  std::map<std::string, const TensorView*> by_canonical_;
  std::vector<std::string> ignored_;
};

struct LoadedModel {
  ModelFiles files;
  BertConfig config;
  std::shared_ptr<const BertWeights> weights;
};

// Everything needed to build an encoder. Prints nothing; callers report
// unused_tensors_line() once if they wish.
LoadedModel load_model(const std::filesystem::path& dir);

// One informational line naming the checkpoint tensors the encoder does not use (e.g. "unused
// checkpoint tensors (pooler and position ids, which BERT checkpoints carry): ..."); empty if none.
std::string unused_tensors_line(const BertWeights& weights);

}  // namespace attnscan
