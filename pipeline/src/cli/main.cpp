// attnscan command-line entry point: dispatches to subcommands.
#include <hdf5.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "encoder/platform.hpp"
#include "common/version.hpp"
#include "cli/commands.hpp"
#include "store/h5_file.hpp"

namespace {

void usage(std::ostream& out) {
  out << "attnscan " << attnscan::kToolVersion
      << " - attention patterns of BERT models over sentence pairs\n\n"
         "Usage: attnscan <command> [options]   (attnscan <command> --help for its options)\n\n"
         "Commands:\n"
         "  run       stream a dataset through the model into one HDF5 file (resumable, shardable)\n"
         "  merge     merge the shard files of a sharded run into one file\n"
         "  attend    tokenize one sentence pair, run the model, show or dump its attention\n"
         "  plugins   list the detector plugins found, with outputs and parameters\n"
         "  heads     top heads per detector output of a result file, optionally by label\n"
         "  compare   per-head tests of two runs (paired) or two label groups, with FDR control\n"
         "  similarity  Jensen-Shannon divergence between heads and its 2-D MDS embedding, stored in the file\n"
         "  report    one offline HTML page: heatmaps, each pattern's top heads in head views, label groups\n"
         "  plot      SVG figures for papers: heatmaps, per-layer views, one head view\n"
         "  verify    check a result file completely: checksums, attention rows, scores, offsets\n"
         "  info      this machine: CPU, instruction set, bf16 support, LibTorch, oneDNN, BLAS, HDF5 (= --version)\n"
         "  slurm     submit a sharded run to SLURM (array + merge), its status, resubmit what failed\n";
}

// Ends the process with `rc` once the output streams are flushed, without the libraries' exit handlers:
// every file was closed by its owner before this, and LibTorch's handlers (unregistering its operators)
// took ~0.07 CPU s per run. Under a sanitizer they run, so its leak check does.
[[noreturn]] void finish(int rc) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__)
  std::exit(rc);
#else
  std::_Exit(rc);
#endif
}

int dispatch(std::vector<std::string> args) {
  // Past a file-size limit, writes fail with EFBIG (reported, blocks kept) instead of killing us.
  std::signal(SIGXFSZ, SIG_IGN);
  // HDF5's exit handler crashes on a file whose close failed (disk full); every file is closed by
  // its owner before exit, so the handler has nothing to do.
  H5dont_atexit();
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage(std::cout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "info") {  // what a bug report needs
    try {
      std::cout << "attnscan " << attnscan::kToolVersion << "\n"
                << attnscan::compute_platform().describe() << "HDF5: " << attnscan::h5::library_version() << "\n";
      if (const char* image = std::getenv("ATTNSCAN_IMAGE"); image && *image)  // set by the Containerfile
        std::cout << "container image: " << image << "\n";
    } catch (const std::exception& e) {
      std::cerr << "attnscan info: error: " << e.what() << "\n";
      return 1;
    }
    return 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "attend") return attnscan::cli::attend_command(args);
    if (command == "run") return attnscan::cli::run_command(args);
    if (command == "merge") return attnscan::cli::merge_command(args);
    if (command == "plugins") return attnscan::cli::plugins_command(args);
    if (command == "heads") return attnscan::cli::heads_command(args);
    if (command == "report") return attnscan::cli::report_command(args);
    if (command == "plot") return attnscan::cli::plot_command(args);
    if (command == "slurm") return attnscan::cli::slurm_command(args);
    if (command == "compare") return attnscan::cli::compare_command(args);
    if (command == "similarity") return attnscan::cli::similarity_command(args);
    if (command == "verify") return attnscan::cli::verify_command(args);
    std::cerr << "attnscan: unknown command '" << command << "'\n\n";
    usage(std::cerr);
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "attnscan " << command << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) { finish(dispatch(std::vector<std::string>(argv + 1, argv + argc))); }
