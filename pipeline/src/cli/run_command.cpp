// `attnscan run`: the main job, configured by YAML and --set, resumable and shardable.
#include <signal.h>

#include <boost/program_options.hpp>
#include <iomanip>
#include <iostream>

#include "attnscan/run_config.hpp"
#include "cli/commands.hpp"
#include "run/run_job.hpp"

namespace po = boost::program_options;

namespace attnscan::cli {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

void parse_shard(const std::string& text, int& index, int& count) {
  auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument(text);
    std::size_t used = 0;
    index = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument(text);
    count = std::stoi(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    throw Error("--shard " + text + ": expected i/N, e.g. 0/4");
  }
  if (count < 1 || index < 0 || index >= count) throw Error("--shard " + text + ": need 0 <= i < N");
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
      "model", po::value(&model), "Hugging Face BERT directory (same as --set model=...)")(
      "shard", po::value(&shard)->default_value("0/1"), "process shard i of N (blocks b with b % N == i)")(
      "overwrite", "discard an existing output or unfinished parts instead of resuming")(
      "dump-config", "print the effective configuration and exit")("no-progress", "no progress bar or log lines");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\nConfiguration options (defaults < YAML < --set):\n";
    for (const auto& o : config_options())
      std::cout << "  " << std::left << std::setw(26) << o.key << std::setw(12) << o.type << "default '"
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

  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return run_job(req, g_stop, std::cerr);
}

}  // namespace attnscan::cli
