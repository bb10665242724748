#pragma once
// The configuration of a run. Every option is defined once, in the table of run_config.cpp, with
// its type, default, allowed values and documentation. Precedence: defaults < YAML < --set key=value.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dataset/dataset.hpp"
#include "encoder/encoder.hpp"
#include "common/error.hpp"
#include "store/storage_options.hpp"

namespace attnscan {

// A configuration problem; the message names the file and line (YAML) or the --set argument.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// One entry of `detectors:`: a plugin name and its parameters as text (checked by the plugin host).
struct DetectorConfig {
  std::string name;  // the plugin's detector name
  std::string as;    // another name for its scores (`as:`), so one plugin can run with two parameter sets
  std::string map = "weights";  // what it scores (`map:`): a name of kAttentionMaps (plugin_host/attention_map.hpp)
  std::map<std::string, std::string> params;
  // Where the entry and each parameter were written ("file.yaml:12" or "--set ..."), for errors.
  std::string where;
  std::map<std::string, std::string> param_where;
  const std::string& effective_name() const { return as.empty() ? name : as; }
  bool operator==(const DetectorConfig& o) const {
    return name == o.name && as == o.as && map == o.map && params == o.params;
  }
};

// What ConfigBuilder::build() returns. Defaults are not written here: every value comes from the
// option table (run_config.cpp), the one place where defaults are declared; a RunConfig made any
// other way holds zeros and empty values only.
struct RunConfig {
  std::string model;  // empty: the default model
  TokenizerFile tokenizer_file{};
  DatasetSpec dataset;
  std::string dataset_format;  // tsv | csv | jsonl | parallel, as written
  uint64_t max_rows{};         // 0: all rows
  std::string pair_separator;  // between A and B where the model joins pairs (Tokenizer::pair_separator)
  EncoderOptions engine;
  std::size_t max_length{};  // 0: the model's maximum
  std::filesystem::path output_path;
  uint64_t attention_every{};
  bool value_norms{};                   // output.value_norms
  std::vector<std::string> layer_maps;  // kLayerMaps whose option is true (output.rollout, .value_zeroing, .alti)
  std::string layers, heads;  // index lists, resolved against the model
  AttentionDType attention_dtype{};
  Compression compression{};
  uint64_t block_rows{};
  int inflight{};  // 0: chosen from the cores
  int64_t batch_tokens{};
  std::string detector_isolation;  // plugins | all | none (true, false: all, none)
  int detector_timeout_s{};  // 0: no limit
  std::vector<DetectorConfig> detectors;
  std::vector<std::string> plugin_paths;
  bool importance_ablation{};
  std::string importance_gradient;  // none | classification | mlm
  uint64_t importance_every{};
  int64_t mlm_every{};
};

// "all" or "0,2,4-5" -> sorted indices below count; throws Error otherwise.
std::vector<int64_t> parse_index_list(const std::string& text, int64_t count);

struct OptionInfo {
  std::string key, type, default_value, doc;
};

// Every option with its type, default and documentation (for --help and the docs).
std::vector<OptionInfo> config_options();

// The largest configuration file load_yaml() reads (1 MiB).
inline constexpr std::uintmax_t kMaxConfigBytes = 1 << 20;

class ConfigBuilder {
 public:
  ConfigBuilder();
  // Applies a YAML file: unknown keys, wrong types and out-of-range values are errors naming the
  // file and line.
  void load_yaml(const std::filesystem::path& file);
  // Applies one "--set key=value" (value parsed as a YAML scalar).
  void set(const std::string& assignment);
  // Checks cross-option rules (e.g. a dataset path for the chosen format) and returns the config.
  RunConfig build() const;
  // The effective configuration as YAML (what --dump-config prints and outputs store).
  std::string dump() const;
  // The options that determine the output's content (not threads, device, output path...): a run
  // may resume only when this is unchanged.
  std::string identity() const;

 private:
  void apply(const std::string& key, const std::string& value, const std::string& where);
  void set_detectors(const std::string& names, const std::string& where);
  std::vector<std::pair<std::string, std::string>> values_;  // key -> value text, table order
  std::vector<DetectorConfig> detectors_;
  std::vector<std::string> plugin_paths_;
};

}  // namespace attnscan
