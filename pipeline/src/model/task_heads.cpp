#include "model/task_heads.hpp"

#include <charconv>
#include <sstream>
#include <vector>

#include "common/error.hpp"
#include "common/json_file.hpp"
#include "model/families/family.hpp"
#include "model/tensor_names.hpp"

namespace attnscan {

namespace {

std::vector<std::string> alternatives(const std::string& names) {
  std::vector<std::string> out;
  std::stringstream ss(names);
  for (std::string n; std::getline(ss, n, '|');) out.push_back(n);
  return out;
}

// The first of `names` ('|'-separated) the checkpoint holds, as written or under a family prefix.
const TensorView* find_tensor(const ModelWeights& file, const ModelFamily& family, const std::string& names) {
  for (const auto& n : alternatives(names)) {
    if (const auto* t = file.find_stored(n)) return t;
    for (const auto& prefix : family.prefixes)
      if (const auto* t = file.find_stored(prefix + n)) return t;
  }
  return nullptr;
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

HeadActivationKind activation_kind(HeadActivation a, Activation encoder) {
  switch (a) {
    case HeadActivation::Tanh: return HeadActivationKind::Tanh;
    case HeadActivation::Relu: return HeadActivationKind::Relu;
    case HeadActivation::GeluErf: return HeadActivationKind::GeluErf;
    case HeadActivation::Encoder: break;
  }
  switch (encoder) {
    case Activation::GeluErf: return HeadActivationKind::GeluErf;
    case Activation::GeluTanh: return HeadActivationKind::GeluTanh;
    case Activation::Relu: return HeadActivationKind::Relu;
    case Activation::Silu: break;  // no family with a task head uses it
  }
  return HeadActivationKind::GeluErf;
}

// Collects every shape or dtype problem of the head, so that one message names them all.
class HeadCheck {
 public:
  void want(const TensorView* t, const std::vector<int64_t>& shape) {
    if (!t) return;
    if (t->dtype != DType::F32 && t->dtype != DType::F16 && t->dtype != DType::BF16)
      problems_.push_back("tensor '" + t->name + "' has dtype " + t->dtype_tag + ", expected F32, F16 or BF16");
    else if (t->shape != shape)
      problems_.push_back("tensor '" + t->name + "' has shape " + shape_text(t->shape) + ", expected " + shape_text(shape));
  }
  void problem(std::string p) { problems_.push_back(std::move(p)); }
  void throw_if_any(const std::string& file, const std::string& what) const {
    if (problems_.empty()) return;
    std::string msg = file + ": the " + what + " does not fit the encoder:";
    for (const auto& p : problems_) msg += "\n  " + p;
    throw ModelError(msg);
  }

 private:
  std::vector<std::string> problems_;
};

std::map<std::string, int64_t> read_label2id(const LoadedModel& model) {
  std::map<std::string, int64_t> out;
  const auto j = read_json_file(model.files.config_json);
  auto it = j.find("label2id");
  if (it == j.end() || !it->is_object()) return out;
  for (const auto& [name, id] : it->items()) {
    if (!id.is_number_integer())
      throw ModelError(model.files.config_json.string() + ": field 'label2id' entry '" + name + "' is not an integer");
    out[name] = id.get<int64_t>();
  }
  return out;
}

}  // namespace

const char* to_string(HeadObjective o) {
  switch (o) {
    case HeadObjective::Classification: return "classification";
    case HeadObjective::Mlm: return "mlm";
    case HeadObjective::Lm: return "lm";
  }
  return "";
}

std::optional<HeadObjective> head_objective_named(const std::string& name) {
  if (name == "classification") return HeadObjective::Classification;
  if (name == "mlm") return HeadObjective::Mlm;
  if (name == "lm") return HeadObjective::Lm;
  return std::nullopt;
}

TaskHead load_lm_head(const LoadedModel& model) {
  const ModelConfig& c = model.config;
  if (!c.described_by_layers())
    throw ModelError(model.files.config_json.string() + ": importance.gradient lm needs a causal language model (a decoder: " +
                     "gpt2, llama, mistral, qwen2, qwen3, gemma3_text, gpt_neox); model_type '" + c.model_type +
                     "' has none (its objectives: classification, mlm)");
  const ModelWeights& w = *model.weights;
  if (!w.has(tensor_roles::kLmHead) && !c.tied_lm_head)
    throw ModelError(w.where() + ": no LM head in this checkpoint (tie_word_embeddings is false and the LM head's weight is "
                     "missing); importance.gradient lm needs a checkpoint that carries one");
  TaskHead h;
  h.objective = HeadObjective::Lm;
  h.out_w = w.has(tensor_roles::kLmHead) ? &w.get(tensor_roles::kLmHead) : &w.get(tensor_roles::kTokens);
  h.outputs = c.vocab_size;
  h.description = std::string("LM head (") + (w.has(tensor_roles::kLmHead) ? "its own weight" : "tied to the token embeddings") +
                  ", " + std::to_string(h.outputs) + " tokens)";
  return h;
}

TaskHead load_task_head(const LoadedModel& model, HeadObjective objective) {
  if (objective == HeadObjective::Lm) return load_lm_head(model);
  const ModelFamily& family = find_family(model.config.model_type, model.files.config_json);
  const TaskHeadSpec& spec = objective == HeadObjective::Classification ? family.classification : family.mlm;
  const ModelWeights& file = *model.weights;
  const std::string what = std::string(objective == HeadObjective::Classification ? "sequence-classification" : "masked-LM") +
                           " head";
  if (spec.dense_w.empty())
    throw ModelError(file.where() + ": attnscan knows no " + what + " for model_type '" + family.model_type + "'");
  TaskHead h;
  h.objective = objective;
  h.dense_w = find_tensor(file, family, spec.dense_w);
  h.dense_b = find_tensor(file, family, spec.dense_b);
  h.out_w = find_tensor(file, family, spec.out_w);
  h.out_b = find_tensor(file, family, spec.out_b);
  if (!spec.norm_w.empty()) {
    h.norm_w = find_tensor(file, family, spec.norm_w);
    h.norm_b = find_tensor(file, family, spec.norm_b);
  }
  const bool tied = objective == HeadObjective::Mlm && !h.out_w;
  if (tied) h.out_w = &model.weights->get(embedding_tensor::kWord);  // the decoder shares the word embeddings
  std::vector<std::string> missing;
  auto need = [&](const TensorView* t, const std::string& names) {
    if (!t) missing.push_back("'" + alternatives(names).front() + "'");
  };
  need(h.dense_w, spec.dense_w);
  need(h.dense_b, spec.dense_b);
  need(h.out_w, spec.out_w);
  need(h.out_b, spec.out_b);
  if (!spec.norm_w.empty()) need(h.norm_w, spec.norm_w), need(h.norm_b, spec.norm_b);
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw ModelError(file.where() + ": no " + what + " in this checkpoint (missing " + list +
                     "); importance.gradient " + to_string(objective) + " needs a checkpoint that carries one");
  }
  const int64_t H = model.config.hidden_size, inner = h.dense_w->shape.empty() ? 0 : h.dense_w->shape[0];
  h.outputs = h.out_w->shape.empty() ? 0 : h.out_w->shape[0];
  HeadCheck check;
  check.want(h.dense_w, {inner, H});
  check.want(h.dense_b, {inner});
  check.want(h.norm_w, {inner});
  check.want(h.norm_b, {inner});
  check.want(h.out_w, {h.outputs, inner});
  check.want(h.out_b, {h.outputs});
  if (objective == HeadObjective::Classification && h.outputs < 2)
    check.problem("'" + h.out_w->name + "' has " + std::to_string(h.outputs) +
                  " output(s): a regression head, not a classifier (importance.gradient classification needs 2+ labels)");
  if (objective == HeadObjective::Mlm && h.outputs != model.config.vocab_size)
    check.problem("'" + h.out_w->name + "' has " + std::to_string(h.outputs) + " rows, expected vocab_size " +
                  std::to_string(model.config.vocab_size));
  check.throw_if_any(file.where(), what);
  h.activation = activation_kind(spec.activation, model.config.activation);
  h.norm_eps = spec.norm_eps > 0 ? spec.norm_eps : model.config.layer_norm_eps;
  if (objective == HeadObjective::Classification) h.label2id = read_label2id(model);
  h.description = what + " (" + h.dense_w->name + " ... " + (tied ? "decoder tied to " : "") + h.out_w->name + ", " +
                  std::to_string(h.outputs) + (objective == HeadObjective::Classification ? " labels)" : " tokens)");
  return h;
}

std::optional<int64_t> class_index(const TaskHead& head, const std::string& label) {
  int64_t v = 0;
  const char* end = label.data() + label.size();
  if (auto [p, ec] = std::from_chars(label.data(), end, v); ec == std::errc() && p == end && !label.empty())
    return v >= 0 && v < head.outputs ? std::optional<int64_t>(v) : std::nullopt;
  if (auto it = head.label2id.find(label); it != head.label2id.end() && it->second >= 0 && it->second < head.outputs)
    return it->second;
  return std::nullopt;
}

}  // namespace attnscan
