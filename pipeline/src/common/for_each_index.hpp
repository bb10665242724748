#pragma once
// Independent tasks 0 .. n - 1 spread over a few threads, for one-off work such as loading a model.
#include <cstdint>
#include <functional>

namespace attnscan {

// Calls task(i) once for each i in [0, n), on up to `threads` threads (0: all cores), the calling thread
// one of them, and returns when all have ended. Once a task throws, no further task starts; the first
// exception is rethrown here.
void for_each_index(int64_t n, int threads, const std::function<void(int64_t)>& task);

}  // namespace attnscan
