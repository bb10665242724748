// `attnscan verify FILE.h5`: checks a result file completely (store/file_check.hpp) and says what is
// wrong. Exit 0: nothing wrong found; 1: damaged or inconsistent.
#include <boost/program_options.hpp>
#include <iostream>

#include "common/error.hpp"
#include "cli/commands.hpp"
#include "cli/positional.hpp"
#include "store/file_check.hpp"

namespace po = boost::program_options;

namespace attnscan::cli {

int verify_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "attnscan verify FILE.h5: check a result file completely (checksums of every dataset, attention rows summing "
      "to 1, scores finite or NaN, offsets consistent); exit 0 when clean, 1 when damaged");
  opts.add_options()("help,h", "show this help")("no-row-sums", "skip the attention row sums (checksums and structure only)");
  std::vector<std::string> files;
  const auto vm = parse_with_files(args, opts, files, -1);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  if (files.empty()) throw Error("usage: attnscan verify FILE.h5 [FILE.h5 ...] [--no-row-sums]");
  CheckOptions options;
  options.row_sums = !vm.count("no-row-sums");
  int status = 0;
  for (const auto& file : files) {
    if (!std::filesystem::exists(file)) throw Error(file + ": no such file");
    const CheckReport r = check_layout_file(file, options);
    if (!r.ok()) {
      std::cout << file << ": DAMAGED (" << r.problems.size() << " problem(s))\n";
      for (const auto& p : r.problems) std::cout << "  " << p << "\n";
      std::cout << "  Restore the file from a copy, or rerun the run that wrote it (attnscan run ... --overwrite).\n";
      status = 1;
      continue;
    }
    std::cout << file << ": OK: " << r.examples << " examples (" << r.stored_examples << " with attention, "
              << r.attention_values << " values), " << r.rejects << " rejects";
    if (r.checksums)
      std::cout << "; checksums verified ("
                << (r.attention_sources.empty() ? std::to_string(r.checksum_spans) + " attention span(s)"
                                                : "the attention in " + std::to_string(r.attention_sources.size()) +
                                                      " shard file(s) behind its virtual dataset, against their own")
                << ", Fletcher32 on every numeric dataset"
                << (r.text_checksums ? ", CRC-32 of every text row)"
                                     : "); its text columns carry no checksums (format_version " +
                                           std::to_string(r.format_version) + "): their bytes were not checked");
    else
      std::cout << "; format_version " << r.format_version
                << " carries no checksums (written by an older attnscan): structural checks only";
    if (options.row_sums) std::cout << "; " << r.rows_checked << " attention rows sum to 1";
    std::cout << "\n";
  }
  return status;
}

}  // namespace attnscan::cli
