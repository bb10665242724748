// Forward-pass throughput of the encoder next to the fp32 GEMM peak measured in the same run.
//
//   forward_bench [--quick] [--threads N] [--model DIR]
//   forward_bench --gemm-peak [--threads N]     (only the fp32 GEMM peak line; bench/compare_bench.py)
//   forward_bench --ops [--threads N] [--model DIR] (self time of each ATen op in a 16 x 48 forward)
//
// Prints, per model / precision / batch / length: sequences/s, achieved GFLOP/s (useful FLOPs of the
// padded batch, see Transformer::flops) and that rate as a share of the measured fp32 GEMM peak.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/profiler_legacy.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "encoder/encoder.hpp"
#include "model/model_location.hpp"
#include "encoder/platform.hpp"
#include "support/model_builder.hpp"

using namespace attnscan;
using Clock = std::chrono::steady_clock;

namespace {

template <typename F>
double best_seconds(F&& f, double min_total = 1.0, int min_reps = 3) {
  f();  // warm-up
  double best = 1e30, total = 0;
  for (int r = 0; r < min_reps || total < min_total; ++r) {
    auto t0 = Clock::now();
    f();
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, s);
    total += s;
    if (r > 200) break;
  }
  return best;
}

// fp32 GEMM peak: the best of oneDNN inner product and BLAS matmul on large square matrices.
double gemm_peak_gflops(int64_t n, double* onednn_out, double* blas_out) {
  c10::InferenceMode guard;
  auto a = at::randn({n, n}), w = at::randn({n, n});
  auto wm = w.to_mkldnn();
  double flops = 2.0 * double(n) * double(n) * double(n);
  double t1 = best_seconds([&] { at::mkldnn_linear(a.to_mkldnn(), wm, {}).to_dense(); });
  double t2 = best_seconds([&] { at::mm(a, w.t()); });
  *onednn_out = flops / t1 / 1e9;
  *blas_out = flops / t2 / 1e9;
  return std::max(*onednn_out, *blas_out);
}

TokenBatch random_batch(int64_t batch, int64_t len, int64_t vocab, std::mt19937& rng) {
  TokenBatch b;
  b.batch = batch;
  b.seq_len = len;
  std::uniform_int_distribution<int64_t> id(1000, std::min<int64_t>(vocab, 20000) - 1);
  for (int64_t i = 0; i < batch; ++i) {
    b.lengths.push_back(len);
    for (int64_t t = 0; t < len; ++t) {
      b.input_ids.push_back(t == 0 ? 101 : id(rng));
      b.token_type_ids.push_back(t < len / 2 ? 0 : 1);
    }
  }
  return b;
}

// Self time of each ATen op over `reps` forwards of one batch (LibTorch's legacy profiler, CPU events):
// what is spent outside the matrix kernels, op by op. Prints the ops by self time.
void print_op_times(const Transformer& enc, const TokenBatch& b, int reps) {
  namespace prof = torch::autograd::profiler;
  enc.forward(b);  // warm-up
  prof::enableProfilerLegacy(torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU));
  for (int r = 0; r < reps; ++r) enc.forward(b);
  const prof::thread_event_lists lists = prof::disableProfilerLegacy();
  std::map<std::string, std::pair<double, long>> self;  // op -> (self us, calls)
  double total = 0;
  for (const auto& events : lists) {
    struct Open { const prof::LegacyEvent* push; double children; };
    std::vector<Open> stack;
    for (const auto& e : events) {
      if (e.kind() == prof::EventKind::PushRange) stack.push_back({&e, 0.0});
      if (e.kind() != prof::EventKind::PopRange || stack.empty()) continue;
      const Open open = stack.back();
      stack.pop_back();
      const double inclusive = open.push->cpuElapsedUs(e);
      auto& [us, calls] = self[open.push->name()];
      us += inclusive - open.children;
      ++calls;
      if (stack.empty()) total += inclusive;
      else stack.back().children += inclusive;
    }
  }
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [name, t] : self) order.push_back({t.first, name});
  std::sort(order.rbegin(), order.rend());
  std::printf("%-36s %10s %7s %8s\n", "op (self time)", "us/forward", "share", "calls");
  for (const auto& [us, name] : order)
    std::printf("%-36s %10.1f %6.1f%% %8.1f\n", name.c_str(), us / reps, 100.0 * us / total,
                double(self[name].second) / reps);
  std::printf("%-36s %10.1f\n", "all ops", total / reps);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, peak_only = false, ops = false;
  int threads = 0;
  std::filesystem::path model_dir = default_model_dir();
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--gemm-peak")) peak_only = true;
    else if (!std::strcmp(argv[i], "--ops")) ops = true;
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--model") && i + 1 < argc) model_dir = argv[++i];
    else {
      std::fprintf(stderr, "usage: forward_bench [--quick | --gemm-peak | --ops] [--threads N] [--model DIR]\n");
      return 2;
    }
  }
  set_compute_threads(threads);
  std::printf("threads: %d\n%s", at::get_num_threads(), attnscan::compute_platform().describe().c_str());
  double onednn = 0, blas = 0;
  double peak = gemm_peak_gflops(quick ? 1024 : 2048, &onednn, &blas);
  std::printf("fp32 GEMM peak (%d^3): oneDNN %.1f GFLOP/s, BLAS %.1f GFLOP/s -> peak %.1f GFLOP/s\n\n",
              quick ? 1024 : 2048, onednn, blas, peak);
  if (peak_only) return 0;
  if (ops) {
    std::mt19937 rng(7);
    const auto loaded = load_model(model_dir);
    EncoderOptions o;
    o.threads = threads;
    const Transformer enc(loaded, o);
    std::printf("%s, linear %s, batch 16 x 48\n", model_dir.c_str(), linear_backend_name(resolve_linear_backend(o)));
    print_op_times(enc, random_batch(16, 48, loaded.config.vocab_size, rng), 50);
    return 0;
  }

  struct Entry {
    std::string name;
    std::filesystem::path dir;
  };
  std::vector<Entry> models;
  if (std::filesystem::exists(model_dir / "model.safetensors")) models.push_back({"all-MiniLM-L6-v2", model_dir});
  else std::printf("(real model not found at %s: MiniLM uses generated weights)\n", model_dir.c_str());
  auto scratch = std::filesystem::temp_directory_path() / "attnscan_bench_models";
  if (models.empty()) models.push_back({"MiniLM-shaped", test::build_model(scratch / "minilm", test::minilm_shape())});
  models.push_back({"BERT-base-shaped", test::build_model(scratch / "base", test::bert_base_uncased_shape())});

  std::vector<std::pair<int64_t, int64_t>> shapes =
      quick ? std::vector<std::pair<int64_t, int64_t>>{{16, 48}}
            : std::vector<std::pair<int64_t, int64_t>>{{1, 48}, {8, 48}, {16, 48}, {32, 48}, {16, 16}, {16, 128}, {8, 256}};
  std::mt19937 rng(7);
  // fp32 through each linear-layer backend this machine has (engine.linear), then bf16 (oneDNN only).
  std::vector<std::pair<Precision, LinearBackend>> variants = {{Precision::F32, LinearBackend::OneDnn}};
  if (!compute_platform().openblas.empty()) variants.push_back({Precision::F32, LinearBackend::OpenBlas});
  variants.push_back({Precision::BF16, LinearBackend::OneDnn});
  std::printf("%-18s %-5s %-8s %6s %6s %10s %10s %8s\n", "model", "prec", "linear", "batch", "len", "seq/s", "GFLOP/s",
              "%peak");
  for (const auto& m : models) {
    auto loaded = load_model(m.dir);
    for (auto [p, linear] : variants) {
      if (p == Precision::BF16 && !compute_platform().bf16_refusal().empty()) {
        std::printf("%-18s bf16  skipped: %s\n", m.name.c_str(), compute_platform().bf16_refusal().c_str());
        continue;
      }
      EncoderOptions o;
      o.precision = p;
      o.threads = threads;
      o.linear = linear;
      Transformer enc(loaded, o);
      for (auto [batch, len] : shapes) {
        auto b = random_batch(batch, len, loaded.config.vocab_size, rng);
        double s = best_seconds([&] { enc.forward(b); }, quick ? 0.5 : 1.5);
        double gflops = enc.flops(batch, len) / s / 1e9;
        std::printf("%-18s %-5s %-8s %6ld %6ld %10.1f %10.1f %7.1f%%\n", m.name.c_str(), precision_name(p),
                    linear_backend_name(linear), long(batch), long(len), double(batch) / s, gflops, 100.0 * gflops / peak);
        std::fflush(stdout);
      }
    }
  }
  std::filesystem::remove_all(scratch);
  return 0;
}
