// `attnscan run`: the main job, configured by YAML and --set, resumable and shardable.
#include <boost/program_options.hpp>
#include <cstdlib>
#include <iomanip>
#include <iostream>

#include "config/run_config.hpp"
#include "cli/commands.hpp"
#include "cli/positional.hpp"
#include "cli/stop_signals.hpp"
#include "run/run_job.hpp"

namespace po = boost::program_options;

namespace attnscan::cli {

namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  try {
    return std::stoi(v);
  } catch (const std::exception&) {
    throw Error(std::string("$") + name + "='" + v + "' is not a number");
  }
}

// "auto": this SLURM array task's shard, from SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of
// SLURM_ARRAY_TASK_COUNT; "auto/N": task id SLURM_ARRAY_TASK_ID (or JOB_COMPLETION_INDEX of a
// Kubernetes Indexed Job) of N, for arrays that are not 0..N-1.
void parse_auto_shard(const std::string& text, int& index, int& count) {
  const int task = env_int("SLURM_ARRAY_TASK_ID") >= 0 ? env_int("SLURM_ARRAY_TASK_ID") : env_int("JOB_COMPLETION_INDEX");
  if (task < 0)
    throw Error("--shard " + text + ": not inside a SLURM array task (no SLURM_ARRAY_TASK_ID) or a Kubernetes Indexed Job "
                "(no JOB_COMPLETION_INDEX); pass --shard i/N");
  if (text == "auto") {
    const int n = env_int("SLURM_ARRAY_TASK_COUNT"), min = env_int("SLURM_ARRAY_TASK_MIN");
    if (n < 1 || min < 0) throw Error("--shard auto: needs SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN; pass --shard auto/N");
    index = task - min;
    count = n;
  } else {
    index = task;
    count = std::atoi(text.c_str() + 5);
  }
}

void parse_shard(const std::string& text, int& index, int& count) {
  auto slash = text.find('/');
  try {
    if (text == "auto" || text.rfind("auto/", 0) == 0) {
      if (text != "auto" && text.find_first_not_of("0123456789", 5) != std::string::npos) throw std::invalid_argument(text);
      parse_auto_shard(text, index, count);
    } else {
      if (slash == std::string::npos) throw std::invalid_argument(text);
      std::size_t used = 0;
      index = std::stoi(text.substr(0, slash), &used);
      if (used != slash) throw std::invalid_argument(text);
      count = std::stoi(text.substr(slash + 1), &used);
      if (used != text.size() - slash - 1) throw std::invalid_argument(text);
    }
  } catch (const std::logic_error&) {
    throw Error("--shard " + text + ": expected i/N (e.g. 0/4), auto, or auto/N");
  }
  if (count < 1 || index < 0 || index >= count)
    throw Error("--shard " + text + ": shard " + std::to_string(index) + " of " + std::to_string(count) + ": need 0 <= i < N");
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  std::string config_file, output, model, shard = "0/1";
  std::vector<std::string> sets;
  po::options_description opts("attnscan run: tokenize, encode and store attention for a whole dataset");
  opts.add_options()("help,h", "show this help and every configuration option")(
      "config,c", po::value(&config_file), "YAML configuration (see configs/)")(
      "set", po::value(&sets)->composing(), "override one option: --set key=value (repeatable)")(
      "output,o", po::value(&output), "output file (same as --set output.path=...)")(
      "model", po::value(&model), "Hugging Face model directory of a BERT-family model (same as --set model=...)")(
      "shard", po::value(&shard)->default_value("0/1"),
      "process shard i of N (blocks b with b % N == i); auto: this SLURM array task's; auto/N: task id of N")(
      "overwrite", "discard an existing output or unfinished parts instead of resuming")(
      "dump-config", "print the effective configuration and exit")("no-progress", "no progress bar or log lines");
  const po::variables_map vm = parse_options(args, opts);
  if (vm.count("help")) {
    std::cout << opts << "\nConfiguration options (defaults < YAML < --set):\n";
    for (const auto& o : config_options())
      std::cout << "  " << std::left << std::setw(26) << o.key + " " << std::setw(12) << o.type << "default '"
                << o.default_value << "'\n      " << o.doc << "\n";
    std::cout << "  detectors                 list        (none)\n"
                 "      detector plugins: names, or {name: plugin, parameter: value} maps (YAML);\n"
                 "      --set detectors=a,b for names only. `attnscan plugins` lists them.\n"
                 "  plugin_paths              list        (none)\n"
                 "      extra folders searched first for plugins (--set plugin_paths=dir1:dir2)\n";
    std::cout << "\nA killed or interrupted run resumes when rerun with the same command.\n";
    return 0;
  }
  ConfigBuilder builder;
  if (!config_file.empty()) builder.load_yaml(config_file);
  for (const auto& s : sets) builder.set(s);
  if (!output.empty()) builder.set("output.path=" + output);
  if (!model.empty()) builder.set("model=" + model);
  if (vm.count("dump-config")) {
    std::cout << builder.dump();
    return 0;
  }
  RunRequest req;
  req.config = builder.build();
  req.config_yaml = builder.dump();
  req.config_identity = builder.identity();
  parse_shard(shard, req.shard_index, req.shard_count);
  req.overwrite = vm.count("overwrite") > 0;
  req.progress = vm.count("no-progress") == 0;

  const StopSignals signals;
  return run_job(req, signals.requested(), std::cerr);
}

}  // namespace attnscan::cli
