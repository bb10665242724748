#pragma once
// Subcommands of the attnscan CLI. Each takes the arguments after its name and returns an exit code.
#include <string>
#include <vector>

namespace attnscan::cli {

int attend_command(const std::vector<std::string>& args);
int run_command(const std::vector<std::string>& args);
int merge_command(const std::vector<std::string>& args);
int plugins_command(const std::vector<std::string>& args);
int heads_command(const std::vector<std::string>& args);
int report_command(const std::vector<std::string>& args);
int plot_command(const std::vector<std::string>& args);
int slurm_command(const std::vector<std::string>& args);
int compare_command(const std::vector<std::string>& args);
int similarity_command(const std::vector<std::string>& args);
int verify_command(const std::vector<std::string>& args);

}  // namespace attnscan::cli
