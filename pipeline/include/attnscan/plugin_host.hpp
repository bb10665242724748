#pragma once
// Finds, loads and runs detector plugins (shared libraries built against attnscan/detector.hpp).
// The library of a detector stays loaded as long as the detector lives.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnscan/detector.hpp"
#include "attnscan/error.hpp"

namespace attnscan {

// A plugin that cannot be found, loaded, configured or run; the message names the plugin and, when
// scoring failed, the example id.
class PluginError : public Error {
 public:
  using Error::Error;
};

struct LoadedDetector {
  sdk::DetectorInfo info;
  sdk::Params params;  // every parameter, defaults filled in
  std::filesystem::path file;
  std::shared_ptr<const sdk::Detector> detector;

  // Scores a batch; any exception from the plugin becomes a PluginError naming the plugin, the
  // example id and the message. Checks the shape of what the plugin returns.
  std::vector<sdk::ExampleScores> score(const std::vector<sdk::Example>& batch) const;
};

class PluginHost {
 public:
  // Search path, in order: `extra` (YAML plugin_paths), $ATTNSCAN_PLUGIN_PATH (colon-separated),
  // the build tree's plugin folder, the install prefix's lib/attnscan/plugins.
  explicit PluginHost(std::vector<std::filesystem::path> extra = {});
  const std::vector<std::filesystem::path>& search_path() const { return path_; }

  // Every plugin found (first one of each name wins), with its info. Shared libraries that are not
  // loadable detectors are listed in `problems` (file: reason) when given.
  std::vector<LoadedDetector> discover(std::vector<std::string>* problems = nullptr) const;
  // Loads plugin `name` with parameters given as text (from YAML or --set), checked against its
  // declared parameters: unknown names and ill-typed values are errors.
  LoadedDetector load(const std::string& name, const std::map<std::string, std::string>& params) const;
  // Loads a plugin file directly (for tests and `attnscan plugins FILE`).
  LoadedDetector load_file(const std::filesystem::path& file, const std::map<std::string, std::string>& params) const;

 private:
  std::vector<std::filesystem::path> path_;
};

std::string param_type_name(sdk::ParamType t);
std::string param_value_text(const sdk::ParamValue& v);

}  // namespace attnscan
