#pragma once
// Finds, loads and runs detector plugins (shared libraries built against attnscan/detector.hpp).
// The library of a detector stays loaded as long as the detector lives.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugin_host/attention_map.hpp"
#include "attnscan/detector.hpp"
#include "common/error.hpp"

namespace attnscan {

// A plugin that cannot be found, loaded, configured or run; the message names the plugin and, when
// scoring failed, the example id.
class PluginError : public Error {
 public:
  using Error::Error;
};

// A parameter that the plugin does not declare or whose value has the wrong type; `param()` names
// it so that callers can point at where it was written.
class PluginParamError : public PluginError {
 public:
  PluginParamError(std::string param, const std::string& message) : PluginError(message), param_(std::move(param)) {}
  const std::string& param() const { return param_; }

 private:
  std::string param_;
};

// A plugin file that was opened and whose info was read; no detector is constructed.
struct PluginFile {
  std::filesystem::path file;
  sdk::DetectorInfo info;
  std::shared_ptr<void> library;  // keeps the shared library loaded
};

// A file on the search path that is not a usable detector, and why.
struct SkippedPlugin {
  std::filesystem::path file;
  std::string reason;
};

struct LoadedDetector {
  sdk::DetectorInfo info;
  sdk::Params params;  // every parameter, defaults filled in
  std::filesystem::path file;
  std::shared_ptr<const sdk::Detector> detector;
  AttentionMap map = AttentionMap::Weights;  // what the detector is given as `attention` (its `map:`)
  bool shipped = false;  // from attnscan's own plugin folder (builtin_plugin_dir()), not a plugin folder of the user's

  // Scores a batch (the `map` of its attention; `mixing`: the encoder's maps per example, or empty);
  // any exception from the plugin becomes a PluginError naming the plugin, the example id and the
  // message. Checks the shape of what the plugin returns.
  std::vector<sdk::ExampleScores> score(const std::vector<sdk::Example>& batch,
                                        const std::vector<MixingMaps>& mixing = {}) const;
};

class PluginHost {
 public:
  // Search path, in order: `extra` (YAML plugin_paths), $ATTNSCAN_PLUGIN_PATH (colon-separated),
  // the built-in detectors (builtin_plugin_dir()). A folder of `extra` that does not exist is an
  // error (PluginError), so that a misspelt folder never lets a detector come from elsewhere.
  explicit PluginHost(std::vector<std::filesystem::path> extra = {});
  const std::vector<std::filesystem::path>& search_path() const { return path_; }

  // Every plugin file on the search path, in search order, with its info (no detector is created).
  // Shared libraries that are not loadable detectors, and files that cannot even be examined (a
  // symlink loop, no permission), are skipped and listed in `problems` (file: reason); discovery
  // itself never fails on one bad file.
  std::vector<PluginFile> discover(std::vector<std::string>* problems = nullptr) const;
  // Detector names declared by more than one file of the search path, each with those files.
  static std::map<std::string, std::vector<std::filesystem::path>> duplicates(const std::vector<PluginFile>& found);
  // Loads the plugin that declares detector `name`, with parameters given as text (from YAML or
  // --set), checked against its declared parameters: unknown names and ill-typed values are errors,
  // and so are a name that more than one file declares and a file NAME.so on the search path that
  // does not load (never silently passed over for another file of that name).
  LoadedDetector load(const std::string& name, const std::map<std::string, std::string>& params) const;
  // Loads a plugin file directly (for tests and `attnscan plugins FILE`).
  LoadedDetector load_file(const std::filesystem::path& file, const std::map<std::string, std::string>& params) const;

 private:
  const std::vector<PluginFile>& found() const;  // discover(), once per host: loading N detectors probes each file once
  std::vector<PluginFile> discover_files(std::vector<std::string>* problems, std::vector<SkippedPlugin>* skipped) const;
  std::vector<std::filesystem::path> path_;
  mutable std::optional<std::vector<PluginFile>> found_;
  mutable std::vector<SkippedPlugin> skipped_;
};

std::string param_type_name(sdk::ParamType t);
std::string param_value_text(const sdk::ParamValue& v);
// The built-in detectors: PREFIX/lib/attnscan/plugins for an installed attnscan (found from the
// running executable, so a moved prefix still works), else the build tree's plugins/ folder.
std::filesystem::path builtin_plugin_dir();
// Opens a plugin file and reads its info, checking the API version; constructs no detector.
PluginFile probe_plugin(const std::filesystem::path& file);

}  // namespace attnscan
