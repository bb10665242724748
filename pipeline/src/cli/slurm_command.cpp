// `attnscan slurm submit | status | resubmit`: a sharded run as a SLURM array with a merge job.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "common/error.hpp"
#include "common/shipped_files.hpp"
#include "config/run_config.hpp"
#include "cli/commands.hpp"
#include "cli/positional.hpp"
#include "cluster/slurm_jobs.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace attnscan::cli {

namespace {

int submit(const std::vector<std::string>& args) {
  SlurmOptions o;
  std::string config, output;
  po::options_description opts("attnscan slurm submit -c CONFIG -o OUT.h5 --shards N: a SLURM array of shards and a merge job");
  opts.add_options()("help,h", "show this help")("config,c", po::value(&config), "the run's YAML configuration")(
      "output,o", po::value(&output), "the merged output OUT.h5 (job folder: OUT.h5.slurm/)")(
      "shards", po::value(&o.shards), "number of shards (array tasks); each should run for minutes")(
      "set", po::value(&o.sets)->composing(), "override one option of the run: --set key=value (repeatable)")(
      "partition", po::value(&o.partition), "sbatch --partition")("time", po::value(&o.time), "sbatch --time per shard")(
      "mem", po::value(&o.mem), "sbatch --mem per shard")("cpus-per-task", po::value(&o.cpus_per_task),
                                                          "sbatch --cpus-per-task (the run's threads follow it)")(
      "gpus", po::value(&o.gpus), "sbatch --gpus per shard")("account", po::value(&o.account), "sbatch --account")(
      "qos", po::value(&o.qos), "sbatch --qos")("array-limit", po::value(&o.array_limit),
                                                "at most K shards running at once (--array=...%K)")(
      "signal-before", po::value(&o.signal_before)->default_value(120),
      "seconds before the time limit a shard is told to commit and stop (then requeued)")(
      "sbatch-arg", po::value(&o.sbatch_args)->composing(), "any other sbatch option, e.g. --sbatch-arg=--exclusive")(
      "overwrite", "replace an existing output and job folder")("dry-run", "print the scripts, submit nothing")(
      "container", po::value<std::string>(), "run every job in this attnscan image (SIF) with apptainer or singularity exec")(
      "bind", po::value<std::vector<std::string>>()->composing(), "with --container: one more folder the jobs need (repeatable)");
  const auto vm = parse_options(args, opts);
  if (vm.count("help")) {
    std::cout << opts << "\nSee docs/cluster.md.\n";
    return 0;
  }
  if (config.empty() || output.empty() || o.shards < 1)
    throw Error("usage: attnscan slurm submit -c CONFIG -o OUT.h5 --shards N [--partition P --time T ...]");
  ConfigBuilder check;  // the configuration is checked here, not in N failing jobs
  check.load_yaml(config);
  for (const auto& s : o.sets) check.set(s);
  const RunConfig run = check.build();
  o.config = fs::absolute(given_or_shipped(config));
  if (vm.count("container")) {
    o.container = fs::absolute(vm["container"].as<std::string>());
    if (!fs::exists(o.container)) throw Error("--container " + o.container.string() + ": no such file");
    for (const auto& f : {run.dataset.path, run.dataset.s1, run.dataset.s2, run.dataset.labels})
      if (!f.empty()) o.data_folders.push_back(fs::absolute(f).parent_path());
    if (vm.count("bind"))
      for (const auto& b : vm["bind"].as<std::vector<std::string>>()) o.binds.emplace_back(b);
  } else if (vm.count("bind")) {
    throw Error("--bind is for --container");
  }
  o.output = fs::absolute(output);
  o.overwrite = vm.count("overwrite") > 0;
  o.binary = fs::read_symlink("/proc/self/exe");
  o.workdir = fs::current_path();
  slurm_submit(o, vm.count("dry-run") > 0, std::cout);
  return 0;
}

fs::path folder_argument(const std::vector<std::string>& args, const char* verb) {
  po::options_description opts(std::string("attnscan slurm ") + verb + " OUT.h5.slurm");
  opts.add_options()("help,h", "show this help");
  std::vector<std::string> files;
  const auto vm = parse_with_files(args, opts, files, 1);
  if (vm.count("help") || files.empty()) throw Error(std::string("usage: attnscan slurm ") + verb + " OUT.h5.slurm");
  fs::path folder = files[0];
  if (folder.extension() == ".h5") folder = job_folder(folder);  // OUT.h5 works too
  return folder;
}

}  // namespace

int slurm_command(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: attnscan slurm submit -c CONFIG -o OUT.h5 --shards N [options]   (submit --help)\n"
      "       attnscan slurm status OUT.h5.slurm      per shard: pending/running/done/failed; exit 0 when merged\n"
      "       attnscan slurm resubmit OUT.h5.slurm    only the missing or failed shards, and a new merge";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << usage << "\n";
    return args.empty() ? 2 : 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "submit") return submit(rest);
  if (args[0] == "status") return slurm_status(folder_argument(rest, "status"), std::cout);
  if (args[0] == "resubmit") {
    slurm_resubmit(folder_argument(rest, "resubmit"), std::cout);
    return 0;
  }
  throw Error("unknown slurm command '" + args[0] + "'\n" + usage);
}

}  // namespace attnscan::cli
