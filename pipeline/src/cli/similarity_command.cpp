// `attnscan similarity RESULT.h5`: mean Jensen-Shannon divergence between every pair of heads, and a
// 2-D MDS embedding, stored in the file under /analysis/head_similarity/.
#include <boost/program_options.hpp>
#include <chrono>
#include <iomanip>
#include <iostream>

#include "analysis/similarity.hpp"
#include "common/error.hpp"
#include "cli/commands.hpp"
#include "cli/positional.hpp"

namespace po = boost::program_options;

namespace attnscan::cli {

int similarity_command(const std::vector<std::string>& args) {
  std::string format = "table";
  po::options_description opts("attnscan similarity RESULT.h5: head-by-head Jensen-Shannon divergence and its MDS embedding");
  opts.add_options()("help,h", "show this help")("format", po::value(&format)->default_value("table"),
                                                   "table (the embedding) or csv (the full matrix)");
  std::vector<std::string> files;
  const auto vm = parse_with_files(args, opts, files, 1);
  if (vm.count("help")) {
    std::cout << opts << "\n" << analysis::kSimilarityMethod << ".\n";
    return 0;
  }
  if (files.empty()) throw Error("usage: attnscan similarity RESULT.h5 [--format table|csv]");
  if (format != "table" && format != "csv") throw Error("--format " + format + ": expected table or csv");
  const auto t0 = std::chrono::steady_clock::now();
  analysis::HeadSimilarity s;
  {
    const analysis::ResultFile file(files[0]);
    s = analysis::head_similarity(file);
  }
  analysis::store_similarity(files[0], s);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::size_t k = s.size();
  if (format == "csv") {
    std::cout << "head";
    for (std::size_t b = 0; b < k; ++b) std::cout << "," << s.layers[b] << "-" << s.heads[b];
    std::cout << "\n" << std::setprecision(9);
    for (std::size_t a = 0; a < k; ++a) {
      std::cout << s.layers[a] << "-" << s.heads[a];
      for (std::size_t b = 0; b < k; ++b) std::cout << "," << s.js[a * k + b];
      std::cout << "\n";
    }
  } else {
    std::cout << analysis::kSimilarityMethod << "; " << s.examples << " examples, " << s.queries << " query tokens\n"
              << analysis::kMdsMethod << " (layer-head 0-indexed):\n  head      x          y\n";
    for (std::size_t a = 0; a < k; ++a)
      std::cout << "  " << std::setw(2) << s.layers[a] << "-" << std::left << std::setw(3) << s.heads[a] << std::right
                << std::fixed << std::setprecision(5) << std::setw(10) << s.mds[a * 2] << " " << std::setw(10)
                << s.mds[a * 2 + 1] << "\n";
  }
  std::cerr << "stored in " << files[0] << " under /analysis/head_similarity/ (" << secs << " s)\n";
  return 0;
}

}  // namespace attnscan::cli
