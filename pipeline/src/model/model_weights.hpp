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
  std::filesystem::path dir, config_json;
  std::filesystem::path weights;                    // model.safetensors, or the index of a sharded checkpoint
  std::vector<std::filesystem::path> weight_files;  // the safetensors files themselves (the shards, in order)
};

// Locates the files of a model directory (a sharded checkpoint through model.safetensors.index.json); throws
// ModelError naming what is missing.
ModelFiles locate_model_files(const std::filesystem::path& dir);

class ModelWeights {
 public:
  // Validates every required tensor: the canonical table (tensor_names.hpp) through the family's renames, or
  // for a layer-described family its tensor map (tensor_map.hpp), whose transforms are applied here. All
  // problems (missing, unexpected, wrong shape, wrong dtype) are collected and reported in one ModelError
  // naming the file and each tensor. Accepts names with or without the family's task-model prefix and
  // LayerNorm gamma/beta aliases. `files`: one safetensors file, or a sharded checkpoint's files.
  ModelWeights(std::vector<std::shared_ptr<const SafetensorsFile>> files, const ModelConfig& config);

  // A tensor by canonical name or role; F32, F16 or BF16, valid while this object lives.
  const TensorView& get(const std::string& canonical_name) const;
  bool has(const std::string& canonical_name) const { return by_canonical_.count(canonical_name) > 0; }
  // Hands the pages read so far back to the kernel (SafetensorsFile::drop_pages), for once the weights
  // have been copied or packed.
  void drop_pages() const;
  // A tensor as the checkpoint names it (any shard), or nullptr: for the task heads beside the model.
  const TensorView* find_stored(const std::string& name) const;
  std::string where() const;  // the file, or the folder of the shards, for messages
  // Tensors present in the files but not used (pooler, MLM or classifier heads), original names.
  const std::vector<std::string>& ignored() const { return ignored_; }

 private:
  void map_canonical(const ModelConfig& config);
  void map_roles(const ModelConfig& config);

  std::vector<std::shared_ptr<const SafetensorsFile>> files_;
  std::map<std::string, const TensorView*> by_canonical_;
  std::vector<std::string> ignored_;
  // The roles a transform made: their values (fp32) and the views get() returns.
  std::vector<std::unique_ptr<std::pair<std::vector<float>, TensorView>>> made_;
};

struct LoadedModel {
  ModelFiles files;
  ModelConfig config;
  std::shared_ptr<const ModelWeights> weights;
};

// Everything needed to build an encoder. Prints nothing; callers report
// unused_tensors_line() once if they wish.
LoadedModel load_model(const std::filesystem::path& dir);

// One informational line naming the checkpoint tensors the encoder does not use (e.g. "unused
// checkpoint tensors (pooler and position ids, which BERT checkpoints carry): ..."); empty if none.
std::string unused_tensors_line(const ModelWeights& weights);

}  // namespace attnscan
