#pragma once
// Parsing for subcommands of the form `attnscan CMD FILE... [options]`: the named options plus
// positional arguments collected into `files` (at most `max_files`; -1: any number).
#include <boost/program_options.hpp>
#include <string>
#include <vector>

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

}  // namespace attnscan::cli
