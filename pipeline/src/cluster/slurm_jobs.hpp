#pragma once
// A sharded `attnscan run` as SLURM jobs: the job folder OUT.h5.slurm/ (array and merge scripts,
// jobs.json with every submission, logs/, shards/), submitting it, reading its state with one squeue
// call (and scontrol for jobs that left the queue), and resubmitting only the shards that are
// missing or failed. See docs/cluster.md.
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace attnscan {

struct SlurmOptions {
  std::filesystem::path config;       // the run's YAML (absolute)
  std::vector<std::string> sets;      // --set key=value passed to every shard
  std::filesystem::path output;       // OUT.h5 (absolute)
  int shards = 0;
  std::string partition, time, mem, account, qos;
  int cpus_per_task = 0, gpus = 0, array_limit = 0;
  int signal_before = 120;            // seconds before the time limit the task is told to stop
  std::vector<std::string> sbatch_args;
  bool overwrite = false;
  std::filesystem::path binary;       // the attnscan that the scripts run
  std::filesystem::path workdir;      // where the scripts run (relative paths in the config)
  // A container image (SIF) whose attnscan every job runs through apptainer/singularity exec, with the
  // output, working, configuration and dataset folders bound (and `binds`); empty: the binary above.
  std::filesystem::path container;
  std::vector<std::filesystem::path> data_folders, binds;
};

std::filesystem::path job_folder(const std::filesystem::path& output);

// Writes the job folder and submits the array and the merge job (afterok on the array); with
// `dry_run` prints the scripts and the commands instead, writing and submitting nothing.
void slurm_submit(const SlurmOptions& options, bool dry_run, std::ostream& out);

// One line per shard (pending / running / done / failed / requeued / missing, committed blocks, the log
// and last error of a failed one) and the merge job's state. Returns 0 when every shard is done and
// merged, 1 when something failed, 2 while work is pending or running.
int slurm_status(const std::filesystem::path& folder, std::ostream& out);

// Submits the missing or failed shards again, as one array with exactly those indices, and a new
// merge job depending on it. Done shards, and shards still pending or running, are left alone.
void slurm_resubmit(const std::filesystem::path& folder, std::ostream& out);

}  // namespace attnscan
