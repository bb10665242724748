#include "model/model_weights.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "model/tensor_names.hpp"
#include "tokenizer/tokenizer.hpp"
#include "model/families/family.hpp"

namespace attnscan {

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// Maps a stored name to its canonical form: drops the family's prefix of task models, applies its
// renames, and renames the LayerNorm gamma/beta of old TensorFlow-converted checkpoints.
std::string canonical(std::string name, const std::string& prefix, const ModelFamily& family) {
  if (!prefix.empty() && name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
  for (const auto& [from, to] : family.renames)
    if (auto at = name.find(from); at != std::string::npos) name.replace(at, from.size(), to);
  auto ends = [&](const std::string& s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  if (ends("LayerNorm.gamma")) name.replace(name.size() - 5, 5, "weight");
  else if (ends("LayerNorm.beta")) name.replace(name.size() - 4, 4, "bias");
  return name;
}

// The name a checkpoint of this family gives a canonical tensor (for messages): the renames undone,
// longest canonical part first (".attention.output.LayerNorm." before ".output.LayerNorm."); the
// canonical name itself when that does not map back.
std::string checkpoint_name(const std::string& canonical_name, const std::string& prefix, const ModelFamily& family) {
  auto reverse = family.renames;
  std::stable_sort(reverse.begin(), reverse.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::string name = canonical_name;
  for (const auto& [stored, canon] : reverse)
    if (auto at = name.find(canon); at != std::string::npos) name.replace(at, canon.size(), stored);
  return canonical(prefix + name, prefix, family) == canonical_name ? prefix + name : canonical_name;
}

bool is_unused(const std::string& name, const ModelFamily& family) {
  for (const auto& p : family.unused)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace

ModelFiles locate_model_files(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw ModelError(dir.string() + ": model directory not found");
  ModelFiles f{dir, dir / "config.json", dir / "model.safetensors"};
  if (!fs::exists(f.config_json)) throw ModelError(f.config_json.string() + ": missing from the model directory");
  if (!has_tokenizer_file(dir))
    throw ModelError(dir.string() + ": no tokenizer file in the model directory: attnscan reads " +
                     tokenizer_files_wanted());
  if (!fs::exists(f.weights)) {
    std::string hint = fs::exists(dir / "pytorch_model.bin")
                           ? " (only pytorch_model.bin found: convert it to safetensors, see README)"
                           : "";
    throw ModelError(f.weights.string() + ": missing from the model directory" + hint);
  }
  return f;
}

BertWeights::BertWeights(std::shared_ptr<const SafetensorsFile> file, const BertConfig& config)
    : file_(std::move(file)) {
  const ModelFamily& family = find_family(config.model_type, file_->path());
  std::string prefix;  // the family's prefix when the checkpoint is a task model (e.g. "bert.")
  for (const auto& t : file_->tensors())
    for (const auto& p : family.prefixes)
      if (t.name.rfind(p, 0) == 0) prefix = p;
  const bool prefixed = !prefix.empty();

  std::map<std::string, const TensorView*> present;
  std::vector<std::string> problems;
  for (const auto& t : file_->tensors()) {
    std::string name = canonical(t.name, prefix, family);
    if (prefixed && t.name.rfind(prefix, 0) != 0) {  // task head beside the encoder
      ignored_.push_back(t.name);
      continue;
    }
    if (!present.emplace(name, &t).second)
      problems.push_back("tensor '" + t.name + "' duplicates another spelling of '" + name + "'");
  }

  std::set<std::string> required;
  for (const auto& spec : required_tensors(config)) {
    required.insert(spec.name);
    auto it = present.find(spec.name);
    if (it == present.end()) {
      problems.push_back("missing tensor '" + checkpoint_name(spec.name, prefix, family) + "' " +
                         shape_str(spec.shape));
      continue;
    }
    const TensorView& t = *it->second;
    if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16)
      problems.push_back("tensor '" + t.name + "' has dtype " + t.dtype_tag + ", expected F32, F16 or BF16");
    else if (t.shape != spec.shape)
      problems.push_back("tensor '" + t.name + "' has shape " + shape_str(t.shape) + ", expected " +
                         shape_str(spec.shape) + " for this config.json");
    else
      by_canonical_[spec.name] = &t;
  }
  for (const auto& [name, t] : present) {
    if (required.count(name)) continue;
    if (is_unused(name, family)) ignored_.push_back(t->name);
    else problems.push_back("unexpected tensor '" + t->name + "' (not part of a " + family.model_type + " encoder)");
  }
  if (!problems.empty()) {
    std::ostringstream msg;
    msg << file_->path().string() << ": " << problems.size() << " problem(s) with the weights:";
    for (const auto& p : problems) msg << "\n  " << p;
    throw ModelError(msg.str());
  }
}

const TensorView& BertWeights::get(const std::string& canonical_name) const {
  auto it = by_canonical_.find(canonical_name);
  if (it == by_canonical_.end())
    throw ModelError(file_->path().string() + ": no tensor '" + canonical_name + "'");
  return *it->second;
}

LoadedModel load_model(const std::filesystem::path& dir) {
  LoadedModel m;
  m.files = locate_model_files(dir);
  m.config = load_bert_config(m.files.config_json);
  m.weights = std::make_shared<BertWeights>(std::make_shared<SafetensorsFile>(m.files.weights), m.config);
  return m;
}

std::string unused_tensors_line(const BertWeights& weights) {
  const auto& names = weights.ignored();
  if (names.empty()) return "";
  bool only_standard = true;  // pooler and position/token-type id buffers: present in every BERT checkpoint
  std::string list;
  for (const auto& n : names) {
    list += (list.empty() ? "" : ", ") + n;
    if (n.find("pooler.") == std::string::npos && n.find("position_ids") == std::string::npos &&
        n.find("token_type_ids") == std::string::npos)
      only_standard = false;
  }
  return std::to_string(names.size()) + " checkpoint tensor(s) not used for attention" +
         (only_standard ? " (the pooler and id buffers every BERT checkpoint carries)" : " (task heads or pooler)") +
         ": " + list;
}

}  // namespace attnscan
