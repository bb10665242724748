#pragma once
// Writes Hugging Face style BERT directories with generated weights, for tests: config.json,
// vocab.txt, tokenizer_config.json and model.safetensors. Tensors can be edited before writing to
// produce every kind of broken checkpoint.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace attnscan::test {

struct ModelShape {
  std::string name;
  int64_t layers = 2, heads = 2, hidden = 8, intermediate = 16, vocab = 80, max_positions = 32, type_vocab = 2;
  bool cased = false;
};

// The shapes of the real checkpoints attnscan must load.
ModelShape minilm_shape();
ModelShape bert_base_uncased_shape();
ModelShape bert_large_cased_shape();
ModelShape bert_base_multilingual_cased_shape();
ModelShape tiny_shape();

struct Blob {
  std::string name;
  std::string dtype;  // safetensors tag: F32, F16, BF16, I32, ...
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

struct BuildOptions {
  std::string dtype = "F32";   // storage dtype of weights
  std::string prefix;          // "bert." for task checkpoints
  bool task_heads = false;     // add cls.* / pooler tensors
  std::string model_type = "bert";
  uint64_t seed = 1;
  std::function<void(std::vector<Blob>&)> edit;  // change tensors before writing
};

// Generated vocabulary: the special tokens, a few words, pieces and letters.
std::vector<std::string> test_vocab();

std::filesystem::path build_model(const std::filesystem::path& dir, const ModelShape& shape,
                                  const BuildOptions& options = {});

// Writes a safetensors file from blobs (header + data, offsets in order).
void write_safetensors(const std::filesystem::path& path, const std::vector<Blob>& blobs);

}  // namespace attnscan::test
