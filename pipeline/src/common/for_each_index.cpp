#include "common/for_each_index.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace attnscan {

void for_each_index(int64_t n, int threads, const std::function<void(int64_t)>& task) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<int64_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto work = [&] {
    for (int64_t i; (i = next++) < n;) {
      try {
        task(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> helpers;
  try {
    for (int64_t t = 1; t < std::min<int64_t>(threads, n); ++t) helpers.emplace_back(work);
  } catch (const std::system_error&) {  // no further thread now: those started and this one do the rest
  }
  work();
  for (auto& h : helpers) h.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace attnscan
