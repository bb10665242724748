#pragma once
// The configuration of a run. Every option is defined once, in the table of run_config.cpp, with
// its type, default, allowed values and documentation. Precedence: defaults < YAML < --set key=value.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscan/dataset.hpp"
#include "attnscan/encoder.hpp"
#include "attnscan/error.hpp"

namespace attnscan {

// A configuration problem; the message names the file and line (YAML) or the --set argument.
class ConfigError : public Error {
 public:
  using Error::Error;
};

struct RunConfig {
  std::string model;  // empty: the default model
  DatasetSpec dataset;
  std::string dataset_format = "tsv";  // tsv | csv | jsonl | parallel, as written
  EncoderOptions engine;
  std::size_t max_length = 0;  // 0: the model's maximum
};

struct OptionInfo {
  std::string key, type, default_value, doc;
};

// Every option with its type, default and documentation (for --help and the docs).
std::vector<OptionInfo> config_options();

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

 private:
  void apply(const std::string& key, const std::string& value, const std::string& where);
  std::vector<std::pair<std::string, std::string>> values_;  // key -> value text, table order
};

}  // namespace attnscan
