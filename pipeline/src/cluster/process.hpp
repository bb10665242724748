#pragma once
// Running an external program (sbatch, squeue, scontrol) and collecting what it printed.
#include <string>
#include <vector>

namespace attnscan {

struct ProcessResult {
  int code = 0;        // exit status; 127 when the program could not be started
  std::string out, err;
};

// Runs argv[0] (searched on PATH) with the arguments, waits, returns its exit status and output.
ProcessResult run_process(const std::vector<std::string>& argv);
// True when `program` is an executable file on PATH.
bool on_path(const std::string& program);

}  // namespace attnscan
