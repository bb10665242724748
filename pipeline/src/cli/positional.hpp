#pragma once
// Parsing shared by subcommands: `attnscan CMD FILE... [options]` (named options plus positional
// arguments collected into `files`, at most `max_files`; -1: any number), and --groups A,B.
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
  pos.add("files", max_files);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
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
