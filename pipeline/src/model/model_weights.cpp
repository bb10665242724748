#include "model/model_weights.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/half_float.hpp"
#include "common/json_file.hpp"
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
    if (p.front() == '.' ? name.size() >= p.size() && name.compare(name.size() - p.size(), p.size(), p) == 0
                         : name.rfind(p, 0) == 0)
      return true;
  return false;
}

// The shards a model.safetensors.index.json names, in the order they first appear in its weight_map.
std::vector<std::filesystem::path> shards_of(const std::filesystem::path& index) {
  const auto j = read_json_file(index);
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    throw ModelError(index.string() + ": field 'weight_map' missing or not an object");
  std::vector<std::filesystem::path> shards;
  for (const auto& [tensor, file] : j["weight_map"].items()) {
    if (!file.is_string())
      throw ModelError(index.string() + ": field 'weight_map' names no file for tensor '" + tensor + "'");
    const auto path = index.parent_path() / file.get<std::string>();
    if (std::find(shards.begin(), shards.end(), path) == shards.end()) shards.push_back(path);
  }
  for (const auto& p : shards)
    if (!std::filesystem::exists(p)) throw ModelError(p.string() + ": missing from the model directory (named by " + index.string() + ")");
  return shards;
}

std::string dtype_problem(const TensorView& t) {
  if (t.dtype == DType::F32 || t.dtype == DType::F16 || t.dtype == DType::BF16) return "";
  return "tensor '" + t.name + "' has dtype " + t.dtype_tag + ", expected F32, F16 or BF16";
}

// t's values as fp32, in its stored layout.
std::vector<float> fp32_values(const TensorView& t) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  const auto* bytes = t.data;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (t.dtype == DType::F32) {
      std::memcpy(&out[i], bytes + i * 4, 4);
    } else {
      uint16_t half;
      std::memcpy(&half, bytes + i * 2, 2);
      out[i] = t.dtype == DType::BF16 ? bfloat16_to_float(half) : half_to_float(half);
    }
  }
  return out;
}

void throw_problems(const std::string& where, const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  std::ostringstream msg;
  msg << where << ": " << problems.size() << " problem(s) with the weights:";
  for (const auto& p : problems) msg << "\n  " << p;
  throw ModelError(msg.str());
}

}  // namespace

ModelFiles locate_model_files(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw ModelError(dir.string() + ": model directory not found");
  ModelFiles f{dir, dir / "config.json", dir / "model.safetensors", {}};
  if (!fs::exists(f.config_json)) throw ModelError(f.config_json.string() + ": missing from the model directory");
  if (!has_tokenizer_file(dir))
    throw ModelError(dir.string() + ": no tokenizer file in the model directory: attnscan reads " +
                     tokenizer_files_wanted());
  if (fs::exists(f.weights)) {
    f.weight_files = {f.weights};
  } else if (fs::exists(dir / "model.safetensors.index.json")) {
    f.weights = dir / "model.safetensors.index.json";
    f.weight_files = shards_of(f.weights);
  } else {
    std::string hint = fs::exists(dir / "pytorch_model.bin")
                           ? " (only pytorch_model.bin found: convert it to safetensors, see README)"
                           : "";
    throw ModelError(f.weights.string() + ": missing from the model directory" + hint);
  }
  return f;
}

ModelWeights::ModelWeights(std::vector<std::shared_ptr<const SafetensorsFile>> files, const ModelConfig& config)
    : files_(std::move(files)) {
  if (config.described_by_layers()) map_roles(config);
  else map_canonical(config);
}

std::string ModelWeights::where() const {
  return files_.size() == 1 ? files_.front()->path().string()
                            : files_.front()->path().parent_path().string() + " (" + std::to_string(files_.size()) + " shards)";
}

const TensorView* ModelWeights::find_stored(const std::string& name) const {
  for (const auto& f : files_)
    if (const auto* t = f->find(name)) return t;
  return nullptr;
}

void ModelWeights::drop_pages() const {
  for (const auto& f : files_) f->drop_pages();
}

void ModelWeights::map_canonical(const ModelConfig& config) {
  const ModelFamily& family = find_family(config.model_type, files_.front()->path());
  std::string prefix;  // the family's prefix when the checkpoint is a task model (e.g. "bert.")
  for (const auto& file : files_)
    for (const auto& t : file->tensors())
      for (const auto& p : family.prefixes)
        if (t.name.rfind(p, 0) == 0) prefix = p;
  const bool prefixed = !prefix.empty();

  std::map<std::string, const TensorView*> present;
  std::vector<std::string> problems;
  for (const auto& file : files_)
    for (const auto& t : file->tensors()) {
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
    if (auto p = dtype_problem(t); !p.empty())
      problems.push_back(p);
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
  throw_problems(where(), problems);
}

void ModelWeights::map_roles(const ModelConfig& config) {
  const ModelFamily& family = find_family(config.model_type, files_.front()->path());
  const TensorMap map = family.tensor_map(config);
  // Stored names without the family's prefix (a task model's, e.g. "model." of LlamaForCausalLM).
  std::map<std::string, const TensorView*> present;
  std::vector<std::string> problems;
  for (const auto& file : files_)
    for (const auto& t : file->tensors()) {
      std::string name = t.name;
      for (const auto& p : family.prefixes)
        if (name.rfind(p, 0) == 0) name.erase(0, p.size());
      if (!present.emplace(name, &t).second) problems.push_back("tensor '" + t.name + "' appears twice");
    }
  std::set<std::string> used;
  for (const TensorSource& source : map.sources()) {
    auto it = present.find(source.stored);
    if (it == present.end()) {
      if (!source.optional) problems.push_back("missing tensor '" + source.stored + "' " + shape_str(source.stored_shape()));
      continue;
    }
    used.insert(source.stored);
    const TensorView& t = *it->second;
    if (auto p = dtype_problem(t); !p.empty()) {
      problems.push_back(p);
    } else if (t.shape != source.stored_shape()) {
      problems.push_back("tensor '" + t.name + "' has shape " + shape_str(t.shape) + ", expected " +
                         shape_str(source.stored_shape()) + " for this config.json");
    } else if (!source.copied()) {
      by_canonical_[source.role] = &t;
    } else {
      auto made = std::make_unique<std::pair<std::vector<float>, TensorView>>();
      made->first = transformed(source, fp32_values(t));
      TensorView& v = made->second;
      v.name = source.role;
      v.dtype = DType::F32;
      v.dtype_tag = "F32";
      v.shape = source.shape;
      v.data = reinterpret_cast<const std::byte*>(made->first.data());
      v.nbytes = made->first.size() * sizeof(float);
      by_canonical_[source.role] = &v;
      made_.push_back(std::move(made));
    }
  }
  for (const auto& [name, t] : present) {
    if (used.count(name)) continue;
    if (is_unused(name, family)) ignored_.push_back(t->name);
    else problems.push_back("unexpected tensor '" + t->name + "' (not part of a " + family.model_type + " model)");
  }
  throw_problems(where(), problems);
}

const TensorView& ModelWeights::get(const std::string& canonical_name) const {
  auto it = by_canonical_.find(canonical_name);
  if (it == by_canonical_.end()) throw ModelError(where() + ": no tensor '" + canonical_name + "'");
  return *it->second;
}

LoadedModel load_model(const std::filesystem::path& dir) {
  LoadedModel m;
  m.files = locate_model_files(dir);
  m.config = load_model_config(m.files.config_json);
  std::vector<std::shared_ptr<const SafetensorsFile>> files;
  for (const auto& path : m.files.weight_files) files.push_back(std::make_shared<SafetensorsFile>(path));
  m.weights = std::make_shared<ModelWeights>(std::move(files), m.config);
  return m;
}

std::string unused_tensors_line(const ModelWeights& weights) {
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
