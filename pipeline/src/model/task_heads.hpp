#pragma once
// The task heads a checkpoint carries beside its encoder (a sequence classifier, the masked-LM head),
// found through the family's names (model/families/family.hpp), for gradient importance.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "model/model_weights.hpp"

namespace attnscan {

// The loss gradient importance differentiates.
// Lm: a decoder's next-token cross-entropy over the text through its LM head (tied or its own).
enum class HeadObjective { Classification, Mlm, Lm };
const char* to_string(HeadObjective o);                          // "classification" | "mlm" | "lm"
std::optional<HeadObjective> head_objective_named(const std::string& name);  // the inverse

enum class HeadActivationKind { Tanh, Relu, GeluErf, GeluTanh };

// A loaded head: first-token classifier (dense, activation, out) or MLM head (dense, activation,
// LayerNorm, out over the vocabulary). Views into the memory-mapped checkpoint.
struct TaskHead {
  HeadObjective objective = HeadObjective::Classification;
  const TensorView *dense_w = nullptr, *dense_b = nullptr;
  HeadActivationKind activation = HeadActivationKind::Tanh;
  const TensorView *norm_w = nullptr, *norm_b = nullptr;  // MLM only
  double norm_eps = 1e-12;
  const TensorView *out_w = nullptr, *out_b = nullptr;    // out_w: the word embeddings when tied
  int64_t outputs = 0;                                   // labels (classification) or vocabulary size (mlm)
  std::map<std::string, int64_t> label2id;               // config.json's, for string labels
  std::string description;  // e.g. "classification head pooler.dense.weight ... classifier.weight (3 labels)"
};

// The head `objective` needs; a ModelError naming the checkpoint and the tensors looked for when the
// checkpoint has none, or when their shapes do not fit the encoder. A classification head with one
// output (a regression head) is refused.
TaskHead load_task_head(const LoadedModel& model, HeadObjective objective);
// A decoder's LM head: out_w the lm_head role, or the token embeddings where tied; a ModelError naming the
// config for a model that is no decoder.
TaskHead load_lm_head(const LoadedModel& model);

// The class index of an example's label for a classification head: an integer in [0, outputs), or a
// name in config.json's label2id. nullopt when it is neither.
std::optional<int64_t> class_index(const TaskHead& head, const std::string& label);

}  // namespace attnscan
