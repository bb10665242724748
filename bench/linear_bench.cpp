// oneDNN's inner products (kernels::PackedLinear, as the encoder calls them) alone, at an encoder's shapes:
//   linear_bench [--hidden 768] [--ffn 3072] [--rows 64,300,768] [--threads 1] [--reps 6]
// For each of a layer's four linear layers (fused q|k|v, the attention output with its residual, the
// feed-forward's two with GELU and the residual) and each row count, prints the best GFLOP/s over --reps
// calls with the weights in cache (the call before read them), and with the weights brought from memory
// (256 MiB written between calls, as the rest of a forward does between one batch's layer and the next's).
// A run's GEMM kernels can be held against these: the perf ruler of bench/overhead_bench.py gives their
// us per token, bench/overhead_bench.py's "executed GEMM FLOPs" their FLOPs.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "encoder/onednn_linear.hpp"

namespace {

using namespace attnscan::kernels;

struct Options {
  int64_t hidden = 768, ffn = 3072;
  std::vector<int64_t> rows = {64, 300, 768};
  int threads = 1, reps = 6;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "linear_bench: %s\nusage: linear_bench [--hidden 768] [--ffn 3072] [--rows 64,300,768] [--threads 1] [--reps 6]\n",
               why.c_str());
  std::exit(2);
}

int64_t positive(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v <= 0 || v > (1 << 20)) usage(flag + " takes a positive integer, not '" + text + "'");
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--hidden") o.hidden = positive(flag, value);
    else if (flag == "--ffn") o.ffn = positive(flag, value);
    else if (flag == "--threads") o.threads = static_cast<int>(positive(flag, value));
    else if (flag == "--reps") o.reps = static_cast<int>(positive(flag, value));
    else if (flag == "--rows") {
      o.rows.clear();
      std::stringstream list(value);
      for (std::string item; std::getline(list, item, ',');) o.rows.push_back(positive(flag, item));
    } else usage("unknown option " + flag);
  }
  return o;
}

struct Layer {
  const char* name;
  int64_t out, in;
  Epilogue epilogue;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  omp_set_num_threads(o.threads);
  const Layer layers[] = {{"q|k|v", 3 * o.hidden, o.hidden, Epilogue::None},
                          {"attention output + residual", o.hidden, o.hidden, Epilogue::AddResidual},
                          {"feed-forward in + GELU", o.ffn, o.hidden, Epilogue::GeluErf},
                          {"feed-forward out + residual", o.hidden, o.ffn, Epilogue::AddResidual}};
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<unsigned char> elsewhere(std::size_t{256} << 20);
  std::printf("oneDNN fp32 inner products, %d thread(s), best of %d: GFLOP/s with the weights in cache / from memory\n",
              o.threads, o.reps);
  for (const auto& layer : layers) {
    std::vector<float> w(static_cast<std::size_t>(layer.out * layer.in)), b(static_cast<std::size_t>(layer.out));
    for (auto& x : w) x = normal(rng);
    for (auto& x : b) x = normal(rng);
    const PackedLinear linear(w.data(), b.data(), layer.out, layer.in, /*bf16=*/false);
    for (const int64_t rows : o.rows) {
      std::vector<float> x(static_cast<std::size_t>(rows * layer.in)), y(static_cast<std::size_t>(rows * layer.out));
      for (auto& v : x) v = normal(rng);
      linear.apply(x.data(), rows, y.data(), layer.epilogue);  // creates the primitive
      double in_cache = 1e300, from_memory = 1e300;
      for (int rep = 0; rep < o.reps; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        linear.apply(x.data(), rows, y.data(), layer.epilogue);
        in_cache = std::min(in_cache, seconds_since(t0));
        std::memset(elsewhere.data(), rep, elsewhere.size());
        t0 = std::chrono::steady_clock::now();
        linear.apply(x.data(), rows, y.data(), layer.epilogue);
        from_memory = std::min(from_memory, seconds_since(t0));
      }
      const double gflop = 2.0 * static_cast<double>(rows * layer.out * layer.in) / 1e9;
      std::printf("  %-28s %5lld x %-5lld rows %5lld: %6.1f / %6.1f\n", layer.name, static_cast<long long>(layer.out),
                  static_cast<long long>(layer.in), static_cast<long long>(rows), gflop / in_cache, gflop / from_memory);
    }
  }
  return 0;
}
