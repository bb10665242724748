#pragma once
// The detector worker process: reads a batch from shared memory, scores it with every detector, one
// example at a time (marking which in the progress header), writes the scores back and replies.
#include <sys/types.h>

#include <vector>

#include "plugin_host/plugin_host.hpp"

namespace attnscan::worker {

// Runs in the forked child until the host closes the request pipe; never returns.
[[noreturn]] void worker_main(const std::vector<LoadedDetector>& detectors, pid_t host, int request_fd, int reply_fd,
                              int memory_fd);

}  // namespace attnscan::worker
