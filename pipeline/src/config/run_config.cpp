#include "config/run_config.hpp"

#include "common/shipped_files.hpp"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <sstream>

#include "plugin_host/attention_map.hpp"
#include "store/layer_maps.hpp"

namespace attnscan {

namespace {

enum class Kind { String, Bool, Int, Choice, Column, IndexList };

struct Option {
  const char* key;
  Kind kind;
  const char* default_value;
  const char* doc;
  std::vector<std::string> choices = {};
  int64_t min = 0, max = 0;
};

// The one table of options.
const std::vector<Option>& table() {
  static const std::vector<Option> t = {
      {"model", Kind::String, "", "Hugging Face model directory of a BERT-family model, docs/models.md (empty: $ATTNSCAN_MODEL or the cached default)"},
      {"tokenizer", Kind::Choice, "auto",
       "the model directory's tokenizer file: auto (the slow tokenizer's files when present, else tokenizer.json), "
       "slow or tokenizer.json",
       {"auto", "slow", "tokenizer.json"}},
      {"dataset.format", Kind::Choice, "tsv",
       "tsv, csv (delimited text), jsonl, parallel (line-aligned files) or conllu (dependency trees, docs/datasets.md)",
       {"tsv", "csv", "jsonl", "parallel", "conllu"}},
      {"dataset.path", Kind::String, "", "the dataset file (tsv, csv, jsonl, conllu)"},
      {"dataset.delimiter", Kind::String, "", "field delimiter, one character (default: tab for tsv, comma for csv)"},
      {"dataset.quoting", Kind::Choice, "none", "none (split on every delimiter) or rfc4180", {"none", "rfc4180"}},
      {"dataset.header", Kind::Bool, "true", "the first line names the columns"},
      {"dataset.sentence_a", Kind::Column, "sentence1", "column name or 0-based index (jsonl: field name)"},
      {"dataset.sentence_b", Kind::Column, "sentence2",
       "column name or 0-based index (jsonl: field name); empty: a single-sentence dataset"},
      {"dataset.id", Kind::Column, "", "optional id column (default: the source line)"},
      {"dataset.label", Kind::Column, "", "optional label column"},
      {"dataset.label_type", Kind::Choice, "string", "string or number", {"string", "number"}},
      {"dataset.pairing", Kind::Choice, "single",
       "conllu: single (each sentence is an example) or consecutive (sentences 1+2, 3+4, ... are pairs)",
       {"single", "consecutive"}},
      {"dataset.s1", Kind::String, "", "parallel: sentence A file"},
      {"dataset.s2", Kind::String, "", "parallel: sentence B file"},
      {"dataset.labels", Kind::String, "", "parallel: optional label file"},
      {"dataset.max_rows", Kind::Int, "0", "read only the first N rows (0: all)", {}, 0, int64_t(1) << 62},
      {"dataset.on_bad_row", Kind::Choice, "error", "error (stop at the first bad row) or skip (count and report it)",
       {"error", "skip"}},
      {"dataset.pair_separator", Kind::String, kDefaultPairSeparator,
       "the text between A and B where the model joins a pair into one text (decoders, docs/models.md); models with a "
       "pair template (the encoders) do not use it"},
      {"engine.precision", Kind::Choice, "fp32", "fp32 or bf16", {"fp32", "bf16"}},
      {"engine.threads", Kind::Int, "0", "compute threads (0: all cores)", {}, 0, 1024},
      {"engine.linear", Kind::Choice, "auto", "linear layers on CPU: auto (oneDNN, weights packed once), openblas (fp32 only) or onednn", {"auto", "openblas", "onednn"}},
      {"engine.device", Kind::String, "cpu", "cpu, cuda or cuda:N"},
      {"engine.max_length", Kind::Int, "0", "truncate pairs to this many tokens (0: the model maximum)", {}, 0, 1 << 20},
      {"output.path", Kind::String, "attnscan.h5", "the HDF5 file to write (parts go to PATH.parts/ until it is complete)"},
      {"output.attention_every", Kind::Int, "1", "store attention of rows whose index is a multiple of k (1: all, 0: none)", {}, 0, 1 << 30},
      {"output.layers", Kind::IndexList, "all", "layers to store: all, or a list such as 0,2,4-5 (0-indexed)"},
      {"output.heads", Kind::IndexList, "all", "heads to store: all, or a list such as 0-3,7 (0-indexed)"},
      {"output.dtype", Kind::Choice, "float16", "attention storage: float16, float32 or uint8 (CF scale_factor 1/255)",
       {"float16", "float32", "uint8"}},
      {"output.compression", Kind::Choice, "none", "none, lz4 (Debian hdf5-filter-plugin) or deflate", {"none", "lz4", "deflate"}},
      {"output.value_norms", Kind::Bool, "false", "store ||f_h(x_j)|| of every token, layer and head (Kobayashi et al. 2020) in tokens/value_norm"},
      {"output.rollout", Kind::Bool, "false", "store every example's attention rollout per layer (Abnar & Zuidema 2020) in rollout/values"},
      {"output.value_zeroing", Kind::Bool, "false",
       "store every example's value zeroing per layer (Mohebbi et al. 2023; about n extra passes of each layer) in "
       "value_zeroing/values (docs/analyses.md)"},
      {"output.alti", Kind::Bool, "false",
       "store every example's ALTI per layer and rolled out across layers (Ferrando et al. 2022) in alti/values and "
       "alti_rollout/values (docs/analyses.md)"},
      {"importance.ablation", Kind::Bool, "false",
       "per example and head: 1 - cos of the mean last hidden state with and without the head (its gate at 0), in "
       "scores/importance/ablation (docs/analyses.md)"},
      {"importance.gradient", Kind::Choice, "none",
       "per example and head: |dL/d gate| (Michel et al. 2019) with L the loss of the checkpoint's classification "
       "head (dataset.label: the class), its mlm head, or a decoder's LM head (lm: the mean next-token cross-entropy "
       "over the text), in scores/importance/gradient; none: not computed",
       {"none", "classification", "mlm", "lm"}},
      {"importance.every", Kind::Int, "1", "compute importance for rows whose index is a multiple of k", {}, 1, 1 << 30},
      {"importance.mlm_every", Kind::Int, "7",
       "mlm objective: mask the content tokens whose number (0, 1, ... in order, specials not counted) is a multiple of k",
       {}, 1, 1 << 20},
      {"pipeline.block_rows", Kind::Int, "256", "rows per block: the unit of batching windows, commits, resume and sharding", {}, 1, 1 << 20},
      {"pipeline.inflight", Kind::Int, "0", "blocks processed at once (0: 2 when there are 2+ cores, else 1)", {}, 0, 256},
      {"pipeline.batch_tokens", Kind::Int, "768", "padded tokens per forward batch (length-bucketed within a block)", {}, 1, 1 << 24},
      {"pipeline.detector_isolation", Kind::Choice, "plugins",
       "which detectors run in worker processes, so that a crash, exit() or hang is named and SIGINT/SIGTERM always "
       "stop the run: plugins (those from plugin folders; attnscan's own run in this process), all (or true), "
       "none (or false: no such guarantees)",
       {"plugins", "all", "none", "true", "false"}},
      {"pipeline.detector_timeout", Kind::Int, "60",
       "seconds one detector may take on one example before the run stops naming it (isolation only; 0: no limit)",
       {}, 0, 1 << 24},
  };
  return t;
}

const Option* find_option(const std::string& key) {
  for (const auto& o : table())
    if (key == o.key) return &o;
  return nullptr;
}

// Edit distance, for "did you mean".
std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string unknown_key(const std::string& key) {
  std::string best;
  std::size_t best_d = 4;
  for (const auto& o : table()) {
    auto d = distance(key, o.key);
    if (d < best_d) best_d = d, best = o.key;
  }
  return "unknown key '" + key + "'" + (best.empty() ? "" : " (did you mean '" + best + "'?)");
}

std::string type_name(Kind k) {
  switch (k) {
    case Kind::String: return "string";
    case Kind::Bool: return "bool";
    case Kind::Int: return "integer";
    case Kind::Choice: return "choice";
    case Kind::Column: return "column";
    case Kind::IndexList: return "index list";
  }
  return "";
}

// A value on one line (the identity, --help): as written, or JSON-quoted where it holds a line break or
// another control character (dataset.pair_separator: "\n").
std::string one_line(const std::string& value) {
  if (std::none_of(value.begin(), value.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; })) return value;
  return nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool is_int(const std::string& v) {
  if (v.empty()) return false;
  std::size_t i = v[0] == '-' ? 1 : 0;
  return i < v.size() && std::all_of(v.begin() + static_cast<std::ptrdiff_t>(i), v.end(), ::isdigit);
}

}  // namespace

std::vector<int64_t> parse_index_list(const std::string& text, int64_t count) {
  std::vector<int64_t> out;
  if (text == "all") {
    for (int64_t i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  std::stringstream ss(text);
  std::string part;
  auto number = [&](const std::string& t) {
    std::string x = t;
    x.erase(0, x.find_first_not_of(' '));
    x.erase(x.find_last_not_of(' ') + 1);
    if (!is_int(x) || x[0] == '-') throw Error("'" + text + "': expected all or indices like 0,2,4-5");
    return std::stoll(x);
  };
  while (std::getline(ss, part, ',')) {
    auto dash = part.find('-');
    int64_t lo = number(part.substr(0, dash)), hi = dash == std::string::npos ? lo : number(part.substr(dash + 1));
    if (hi < lo) throw Error("'" + text + "': range " + part + " runs backwards");
    for (int64_t i = lo; i <= hi; ++i) {
      if (i >= count) throw Error("'" + text + "': index " + std::to_string(i) + " is out of range (there are " + std::to_string(count) + ")");
      if (std::find(out.begin(), out.end(), i) != out.end()) throw Error("'" + text + "': index " + std::to_string(i) + " given twice");
      out.push_back(i);
    }
  }
  if (out.empty()) throw Error("'" + text + "': expected all or indices like 0,2,4-5");
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<OptionInfo> config_options() {
  std::vector<OptionInfo> out;
  for (const auto& o : table()) out.push_back({o.key, type_name(o.kind), one_line(o.default_value), o.doc});
  return out;
}

ConfigBuilder::ConfigBuilder() {
  for (const auto& o : table()) values_.emplace_back(o.key, o.default_value);
}

void ConfigBuilder::apply(const std::string& key, const std::string& value, const std::string& where) {
  const Option* o = find_option(key);
  if (!o) throw ConfigError(where + ": " + unknown_key(key));
  auto bad = [&](const std::string& why) { return ConfigError(where + ": " + key + ": " + why); };
  std::string v = value;
  switch (o->kind) {
    case Kind::Bool:
      if (v == "true" || v == "yes" || v == "on") v = "true";
      else if (v == "false" || v == "no" || v == "off") v = "false";
      else throw bad("expected true or false, got '" + value + "'");
      break;
    case Kind::Int: {
      if (!is_int(v)) throw bad("expected an integer, got '" + value + "'");
      long long n = std::stoll(v);
      if (n < o->min || n > o->max)
        throw bad(v + " is out of range [" + std::to_string(o->min) + ", " + std::to_string(o->max) + "]");
      break;
    }
    case Kind::Choice:
      if (std::find(o->choices.begin(), o->choices.end(), v) == o->choices.end()) {
        std::string all;
        for (const auto& c : o->choices) all += (all.empty() ? "" : ", ") + c;
        throw bad("'" + value + "' is not one of " + all);
      }
      break;
    case Kind::IndexList:
      try {
        if (v != "all") parse_index_list(v, 1 << 20);
      } catch (const Error& e) {
        throw bad(e.what());
      }
      break;
    case Kind::String:
    case Kind::Column:
      break;
  }
  if (key == "dataset.delimiter" && v.size() > 1 && v != "\\t") throw bad("expected a single character");
  if (key == "engine.device") {
    try {
      DeviceSpec::parse(v);
    } catch (const Error& e) {
      throw bad(e.what());
    }
  }
  for (auto& kv : values_)
    if (kv.first == key) kv.second = v;
}

void ConfigBuilder::load_yaml(const std::filesystem::path& given) {
  const std::filesystem::path file = given_or_shipped(given);
  // A configuration is a few kilobytes; refuse a huge file before the parser spends memory and time on it.
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(file, ec);
  if (!ec && bytes > kMaxConfigBytes)
    throw ConfigError(file.string() + ": " + std::to_string(bytes) + " bytes is more than a configuration may be (" +
                      std::to_string(kMaxConfigBytes) + " bytes); is this the right file?");
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    throw ConfigError(file.string() + ": cannot read config file");
  } catch (const YAML::Exception& e) {
    throw ConfigError(file.string() + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
  if (root.IsNull()) return;
  std::function<void(const YAML::Node&, const std::string&)> walk = [&](const YAML::Node& node, const std::string& prefix) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      std::string key = prefix + it->first.as<std::string>();
      const std::string where = file.string() + ":" + std::to_string(it->first.Mark().line + 1);
      const YAML::Node v = it->second;  // a copy: the iterator's pair is a temporary
      if (key == "detectors") {  // a list of {name: plugin, parameter: value, ...}
        if (v.IsNull()) continue;
        if (!v.IsSequence()) throw ConfigError(where + ": detectors: expected a list of {name: ..., parameters}");
        detectors_.clear();
        for (const auto& item : v) {
          const std::string at = file.string() + ":" + std::to_string(item.Mark().line + 1);
          DetectorConfig d;
          d.where = at;
          if (item.IsScalar()) {
            d.name = item.Scalar();
          } else if (item.IsMap()) {
            for (auto p = item.begin(); p != item.end(); ++p) {
              const std::string pk = p->first.as<std::string>();
              if (!p->second.IsScalar() && !p->second.IsNull())
                throw ConfigError(at + ": detectors: parameter '" + pk + "' must be a single value");
              if (pk == "name") d.name = p->second.Scalar();
              else if (pk == "as") d.as = p->second.Scalar();
              else if (pk == "map") d.map = p->second.Scalar();
              else d.params[pk] = p->second.IsNull() ? "" : p->second.Scalar();
              d.param_where[pk] = file.string() + ":" + std::to_string(p->first.Mark().line + 1);
            }
          } else {
            throw ConfigError(at + ": detectors: each entry is a plugin name or {name: ..., parameters}");
          }
          if (d.name.empty()) throw ConfigError(at + ": detectors: entry without a name");
          if (std::none_of(std::begin(kAttentionMaps), std::end(kAttentionMaps), [&](const auto& m) { return d.map == m.name; }))
            throw ConfigError(d.param_where["map"] + ": detectors: " + d.name + ": map: '" + d.map +
                              "': expected " + attention_map_choices());
          if (d.effective_name().find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
            throw ConfigError(at + ": detectors: as: '" + d.as + "': use lowercase letters, digits and _");
          for (const auto& e : detectors_)
            if (e.effective_name() == d.effective_name())
              throw ConfigError(at + ": detectors: '" + d.effective_name() +
                                "' listed twice (to run one detector with two parameter sets, name one with as: NAME)");
          detectors_.push_back(std::move(d));
        }
        continue;
      }
      if (key == "plugin_paths") {
        if (v.IsNull()) continue;
        if (!v.IsSequence()) throw ConfigError(where + ": plugin_paths: expected a list of folders");
        plugin_paths_.clear();
        for (const auto& item : v) {
          if (!item.IsScalar()) throw ConfigError(where + ": plugin_paths: expected folder names");
          plugin_paths_.push_back(item.Scalar());
        }
        continue;
      }
      if (v.IsMap()) {
        bool is_section = false;
        for (const auto& o : table())
          if (std::string(o.key).rfind(key + ".", 0) == 0) is_section = true;
        if (!is_section) throw ConfigError(where + ": " + (find_option(key) ? key + ": expected a value, not a mapping" : unknown_key(key)));
        walk(v, key + ".");
      } else if (v.IsScalar()) {
        apply(key, v.Scalar(), where);
      } else if (v.IsNull()) {
        apply(key, "", where);
      } else {
        throw ConfigError(where + ": " + (find_option(key) ? key + ": expected a single value, not a list" : unknown_key(key)));
      }
    }
  };
  if (!root.IsMap()) throw ConfigError(file.string() + ":1: expected a mapping of options");
  try {
    walk(root, "");
  } catch (const YAML::Exception& e) {  // e.g. a key that is a list or a map
    throw ConfigError(file.string() + ":" + std::to_string(e.mark.line + 1) + ": invalid configuration: " + e.msg);
  }
}

void ConfigBuilder::set_detectors(const std::string& names, const std::string& where) {
  detectors_.clear();
  std::stringstream ss(names);
  std::string name;
  while (std::getline(ss, name, ','))
    if (!name.empty()) {
      for (const auto& e : detectors_)
        if (e.name == name) throw ConfigError(where + ": detectors: '" + name + "' listed twice");
      detectors_.push_back({name, "", "weights", {}, where, {}});
    }
}

void ConfigBuilder::set(const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw ConfigError("--set " + assignment + ": expected key=value");
  std::string key = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  if (key == "detectors") return set_detectors(text, "--set " + assignment);  // names only; parameters via YAML
  if (key == "plugin_paths") {
    plugin_paths_.clear();
    std::stringstream ss(text);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty()) plugin_paths_.push_back(dir);
    return;
  }
  std::string value = text;
  try {  // parse as a YAML scalar so quoting works the same as in files
    YAML::Node n = YAML::Load(text);
    if (n.IsScalar()) value = n.Scalar();
    else if (n.IsNull()) value = "";
  } catch (const YAML::Exception&) {
  }
  apply(key, value, "--set " + assignment);
}

RunConfig ConfigBuilder::build() const {
  auto get = [&](const std::string& key) -> const std::string& {
    for (const auto& kv : values_)
      if (kv.first == key) return kv.second;
    throw ConfigError("internal: no option " + key);
  };
  auto column = [&](const std::string& key) {
    ColumnRef c;
    const std::string& v = get(key);
    if (is_int(v)) c.index = std::stoi(v);
    else c.name = v;
    return c;
  };
  RunConfig c;
  c.model = get("model");
  c.tokenizer_file = tokenizer_file_named(get("tokenizer"));
  c.dataset_format = get("dataset.format");
  auto& d = c.dataset;
  d.format = c.dataset_format == "jsonl"      ? DatasetFormat::Jsonl
             : c.dataset_format == "parallel" ? DatasetFormat::Parallel
             : c.dataset_format == "conllu"   ? DatasetFormat::Conllu
                                              : DatasetFormat::Delimited;
  d.pairing = get("dataset.pairing") == "consecutive" ? ConlluPairing::Consecutive : ConlluPairing::Single;
  d.path = given_or_shipped(get("dataset.path"));
  std::string delim = get("dataset.delimiter");
  d.delimiter = delim.empty() ? (c.dataset_format == "csv" ? ',' : '\t') : delim == "\\t" ? '\t' : delim[0];
  d.quoting = get("dataset.quoting") == "rfc4180" ? Quoting::Rfc4180 : Quoting::None;
  d.header = get("dataset.header") == "true";
  d.sentence_a = column("dataset.sentence_a");
  d.sentence_b = column("dataset.sentence_b");
  d.id = column("dataset.id");
  d.label = column("dataset.label");
  d.label_type = get("dataset.label_type") == "number" ? LabelType::Number : LabelType::String;
  d.s1 = given_or_shipped(get("dataset.s1"));
  d.s2 = given_or_shipped(get("dataset.s2"));
  d.labels = given_or_shipped(get("dataset.labels"));
  d.on_bad_row = get("dataset.on_bad_row") == "skip" ? BadRowPolicy::Skip : BadRowPolicy::Error;
  c.pair_separator = get("dataset.pair_separator");
  c.max_rows = static_cast<uint64_t>(std::stoll(get("dataset.max_rows")));
  if (d.format == DatasetFormat::Parallel) {
    if (d.s1.empty() || d.s2.empty()) throw ConfigError("dataset.format parallel needs dataset.s1 and dataset.s2");
  } else if (d.path.empty()) {
    throw ConfigError("dataset.format " + c.dataset_format + " needs dataset.path");
  }
  c.engine.precision = parse_precision(get("engine.precision"));
  c.engine.threads = std::stoi(get("engine.threads"));
  c.engine.linear = parse_linear_backend(get("engine.linear"));
  c.engine.device = DeviceSpec::parse(get("engine.device"));
  c.max_length = static_cast<std::size_t>(std::stoll(get("engine.max_length")));
  c.output_path = get("output.path");
  if (c.output_path.empty()) throw ConfigError("output.path must not be empty");
  c.attention_every = static_cast<uint64_t>(std::stoll(get("output.attention_every")));
  c.layers = get("output.layers");
  c.value_norms = get("output.value_norms") == "true";
  for (const auto& m : kLayerMaps)
    if (get(m.option) == "true") c.layer_maps.push_back(m.name);
  c.heads = get("output.heads");
  const std::string& dt = get("output.dtype");
  c.attention_dtype = dt == "float32" ? AttentionDType::F32 : dt == "uint8" ? AttentionDType::U8 : AttentionDType::F16;
  const std::string& comp = get("output.compression");
  c.compression = comp == "lz4" ? Compression::Lz4 : comp == "deflate" ? Compression::Deflate : Compression::None;
  c.block_rows = static_cast<uint64_t>(std::stoll(get("pipeline.block_rows")));
  c.inflight = std::stoi(get("pipeline.inflight"));
  c.batch_tokens = std::stoll(get("pipeline.batch_tokens"));
  c.detector_isolation = get("pipeline.detector_isolation");
  c.detector_timeout_s = std::stoi(get("pipeline.detector_timeout"));
  c.importance_ablation = get("importance.ablation") == "true";
  c.importance_gradient = get("importance.gradient");
  c.importance_every = static_cast<uint64_t>(std::stoll(get("importance.every")));
  c.mlm_every = std::stoll(get("importance.mlm_every"));
  if (c.importance_gradient == "classification" && !d.label.set() &&
      !(d.format == DatasetFormat::Parallel && !d.labels.empty()))
    throw ConfigError("importance.gradient classification needs each example's class: set dataset.label" +
                      std::string(d.format == DatasetFormat::Parallel ? "s" : ""));
  if (c.importance_gradient != "none" && c.engine.precision != Precision::F32)
    throw ConfigError("importance.gradient needs engine.precision fp32 (gradients are computed in float32)");
  if (c.importance_ablation || c.importance_gradient != "none")
    for (const auto& det : detectors_)
      if (det.effective_name() == "importance")
        throw ConfigError(det.where + ": the detector name 'importance' is taken by importance.* (use as: to rename it)");
  c.detectors = detectors_;
  c.plugin_paths = plugin_paths_;
  return c;
}

std::string ConfigBuilder::identity() const {
  static const char* const kNotContent[] = {"engine.threads", "engine.linear", "engine.device", "output.path", "pipeline.inflight",
                                             "pipeline.detector_isolation", "pipeline.detector_timeout"};
  std::string out;
  for (const auto& [key, value] : values_) {
    if (std::find(std::begin(kNotContent), std::end(kNotContent), key) != std::end(kNotContent)) continue;
    out += key + ": " + one_line(value) + "\n";
  }
  out += "detectors:";
  for (const auto& d : detectors_) {
    out += " " + d.name + (d.as.empty() ? "" : " as " + d.as) + (d.map == "weights" ? "" : " on " + d.map) + "(";
    for (const auto& [k, v] : d.params) out += k + "=" + v + ";";
    out += ")";
  }
  return out + "\n";
}

std::string ConfigBuilder::dump() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  std::string section;
  for (const auto& [key, value] : values_) {
    auto dot = key.find('.');
    std::string sec = dot == std::string::npos ? "" : key.substr(0, dot);
    if (sec != section) {
      if (!section.empty()) out << YAML::EndMap;
      if (!sec.empty()) out << YAML::Key << sec << YAML::Value << YAML::BeginMap;
      section = sec;
    }
    out << YAML::Key << (dot == std::string::npos ? key : key.substr(dot + 1)) << YAML::Value;
    const Option* o = find_option(key);
    if (o->kind == Kind::Int || o->kind == Kind::Bool || (o->kind == Kind::Column && is_int(value))) out << value;
    else out << YAML::DoubleQuoted << value;
  }
  if (!section.empty()) out << YAML::EndMap;
  out << YAML::Key << "detectors" << YAML::Value << YAML::BeginSeq;
  for (const auto& d : detectors_) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << d.name;
    if (!d.as.empty()) out << YAML::Key << "as" << YAML::Value << d.as;
    if (d.map != "weights") out << YAML::Key << "map" << YAML::Value << d.map;
    for (const auto& [k, v] : d.params) out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "plugin_paths" << YAML::Value << YAML::BeginSeq;
  for (const auto& p : plugin_paths_) out << YAML::DoubleQuoted << p;
  out << YAML::EndSeq;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace attnscan
