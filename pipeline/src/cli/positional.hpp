#pragma once
// Parsing shared by subcommands: `attnscan CMD FILE... [options]` (named options plus positional
// arguments collected into `files`, at most `max_files`, -1: any number; one more is an error naming it), and --groups A,B.
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace attnscan::cli {

inline boost::program_options::variables_map parse_with_files(const std::vector<std::string>& args,
                                                              const boost::program_options::options_description& opts,
                                                              std::vector<std::string>& files, int max_files) {
  namespace po = boost::program_options;
  po::options_description hidden;
  hidden.add_options()("files", po::value(&files)->composing());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("files", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (max_files >= 0 && files.size() > static_cast<std::size_t>(max_files)) {
    const std::string& extra = files[static_cast<std::size_t>(max_files)];
    const bool yaml = extra.size() > 5 && (extra.substr(extra.size() - 5) == ".yaml" || extra.substr(extra.size() - 4) == ".yml");
    throw Error("unexpected argument '" + extra + "'" + (yaml ? " (a YAML configuration is given with -c FILE)" : "") +
                "; --help lists the options");
  }
  return vm;
}

// "--groups A,B" -> {A, B}; empty text -> {} (the default groups).
inline std::vector<std::string> group_pair(const std::string& text) {
  if (text.empty()) return {};
  const auto comma = text.find(',');
  if (comma == std::string::npos) throw Error("--groups " + text + ": expected two labels, A,B");
  return {text.substr(0, comma), text.substr(comma + 1)};
}

}  // namespace attnscan::cli
