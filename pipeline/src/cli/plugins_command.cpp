// `attnscan plugins`: every detector plugin found, with version, description, outputs, parameters.
#include <boost/program_options.hpp>
#include <iostream>

#include "plugin_host/plugin_host.hpp"
#include "cli/commands.hpp"
#include "cli/positional.hpp"

namespace po = boost::program_options;

namespace attnscan::cli {

int plugins_command(const std::vector<std::string>& args) {
  std::vector<std::string> paths;
  po::options_description opts("attnscan plugins: list the detector plugins found");
  opts.add_options()("help,h", "show this help")("plugin-path", po::value(&paths)->composing(),
                                                   "extra folder to search first (repeatable)");
  const po::variables_map vm = parse_options(args, opts);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  PluginHost host(std::vector<std::filesystem::path>(paths.begin(), paths.end()));
  std::cout << "search path:";
  for (const auto& p : host.search_path()) std::cout << " " << p.string();
  std::cout << "\n\n";
  std::vector<std::string> problems;
  const auto found = host.discover(&problems);
  for (const auto& d : found) {
    std::cout << d.info.name << " " << d.info.version << "  (" << d.file.string() << ")\n  " << d.info.description
              << "\n  outputs:";
    for (const auto& o : d.info.outputs) std::cout << " " << o;
    std::cout << "\n";
    for (const auto& p : d.info.params)
      std::cout << "  param " << p.name << " (" << param_type_name(p.type) << ", default " << param_value_text(p.default_value)
                << "): " << p.doc << "\n";
    std::cout << "\n";
  }
  for (const auto& p : problems) std::cout << "skipped " << p << "\n";
  const auto duplicates = PluginHost::duplicates(found);
  for (const auto& [name, files] : duplicates) {
    std::cout << "conflict: detector '" << name << "' is declared by " << files.size() << " files:";
    for (const auto& f : files) std::cout << " " << f.string();
    std::cout << " (a run that uses '" << name << "' is refused until only one is left)\n";
  }
  return duplicates.empty() ? 0 : 1;
}

}  // namespace attnscan::cli
