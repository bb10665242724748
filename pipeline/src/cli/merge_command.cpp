// `attnscan merge OUT.h5 SHARD...`: one file from the shards of a sharded run.
#include <boost/program_options.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/positional.hpp"
#include "common/error.hpp"
#include "store/merge.hpp"

namespace po = boost::program_options;

namespace attnscan::cli {

int merge_command(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  po::options_description opts("attnscan merge OUT.h5 SHARD.h5...: merge the shards i/N of one run");
  opts.add_options()("help,h", "show this help")("overwrite", "replace OUT.h5 if it exists")(
      "virtual", "copy every column but the attention, which stays in the shards: an HDF5 virtual dataset over them "
                 "(paths relative to OUT.h5's folder; move OUT.h5 and the shards together)");
  const auto vm = parse_with_files(args, opts, files, -1);
  if (vm.count("help")) {
    std::cout << opts << "\nEvery shard 0/N .. N-1/N of the same run (same config, model and dataset) must be given once.\n";
    return 0;
  }
  if (files.size() < 2) throw Error("usage: attnscan merge OUT.h5 SHARD.h5... (see --help)");
  std::vector<std::filesystem::path> shards(files.begin() + 1, files.end());
  merge_shards(files[0], shards, vm.count("overwrite") > 0, vm.count("virtual") > 0, std::cout);
  return 0;
}

}  // namespace attnscan::cli
