#pragma once
// Parsing shared by subcommands: `attnscan CMD FILE... [options]`, and --groups A,B.
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace attnscan::cli {

// Named options, and positional arguments collected into `files`: at most `max_files` (-1: any number), one
// more being an error that names it. With --help, only stored: neither required options nor the count are
// checked, so the caller can print its help.
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
  if (vm.count("help")) return vm;
  po::notify(vm);
  if (max_files >= 0 && files.size() > static_cast<std::size_t>(max_files)) {
    const std::string& extra = files[static_cast<std::size_t>(max_files)];
    auto ends_with = [&](const std::string& end) {
      return extra.size() >= end.size() && extra.compare(extra.size() - end.size(), end.size(), end) == 0;
    };
    throw Error("unexpected argument '" + extra + "'" +
                (ends_with(".yaml") || ends_with(".yml") ? " (a YAML configuration is given with -c FILE)" : "") +
                "; --help lists the options");
  }
  return vm;
}

// Named options only: any positional argument is an error naming it.
inline boost::program_options::variables_map parse_options(const std::vector<std::string>& args,
                                                           const boost::program_options::options_description& opts) {
  std::vector<std::string> none;
  return parse_with_files(args, opts, none, 0);
}

// "--groups A,B" -> {A, B}; empty text -> {} (the default groups).
inline std::vector<std::string> group_pair(const std::string& text) {
  if (text.empty()) return {};
  const auto comma = text.find(',');
  if (comma == std::string::npos) throw Error("--groups " + text + ": expected two labels, A,B");
  return {text.substr(0, comma), text.substr(comma + 1)};
}

}  // namespace attnscan::cli
