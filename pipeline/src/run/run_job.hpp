#pragma once
// `attnscan run`: one dataset (or one shard of it) into one HDF5 file, resumable.
#include <atomic>
#include <ostream>
#include <string>

#include "config/run_config.hpp"

namespace attnscan {

struct RunRequest {
  RunConfig config;
  std::string config_yaml;      // effective configuration, stored in the output
  std::string config_identity;  // options that determine the content
  int shard_index = 0, shard_count = 1;
  bool overwrite = false;
  bool progress = true;
};

enum RunExit { kRunOk = 0, kRunFailed = 1, kRunInterrupted = 130 };

// Runs to completion (exit 0), or stops on `stop` having committed whole blocks (130).
int run_job(const RunRequest& request, const std::atomic<bool>& stop, std::ostream& log);

}  // namespace attnscan
