// The attention kernel (kernels::attend_head) alone, on a batch laid out as the encoder lays it out.
//   attention_kernel_bench [--n 53] [--batch-tokens 350] [--heads 12] [--head-dim 64] [--layers 12] [--bias] [--reps 30]
// Per layer, the fused q | k | v rows of the batch (examples of n tokens, as many as fit in --batch-tokens)
// are written anew, as the projection writes them, and something else the size of the L2 cache is
// touched, as the layer's GEMMs do; then every (example, head) is attended, its map written where the
// encoder writes it (each example's layers and heads in one place of the batch's buffer). For each
// body the CPU has, prints the best over --reps of the kernel's us per token (all layers), and the same
// with every map written to one reused place: the difference is what writing the maps into memory that
// is not in cache costs. --bias adds a relative-position bias to the scores (all-mpnet-base-v2's).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "encoder/attention_kernel.hpp"

namespace {

using namespace attnscan::kernels;

struct Shape {
  int64_t n = 53, batch_tokens = 350, heads = 12, d = 64, layers = 12;
  bool bias = false;
  int reps = 30;
};

// Best time over the repetitions of attending every head of every layer, in us per token.
double time_batch(const Shape& s, KernelIsa isa, bool reuse_maps) {
  const int64_t B = std::max<int64_t>(1, s.batch_tokens / s.n), H = s.heads * s.d, ld = 3 * H, NH = s.heads, n = s.n;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> projected(static_cast<std::size_t>(B * n * ld)), qkv(projected.size());
  for (auto& x : projected) x = normal(rng);
  std::vector<float> bias(static_cast<std::size_t>(NH * n * n));
  for (auto& x : bias) x = 0.1f * normal(rng);
  std::vector<float> maps(static_cast<std::size_t>((reuse_maps ? 1 : B * s.layers) * NH * n * n));
  std::vector<float> ctx(static_cast<std::size_t>(B * n * H)), other(std::size_t{4} << 20);
  double best = 1e300;
  for (int rep = 0; rep < s.reps; ++rep) {
    double attending = 0;
    for (int64_t l = 0; l < s.layers; ++l) {
      for (std::size_t i = 0; i < other.size(); i += 16) other[i] += 1.0f;
      std::memcpy(qkv.data(), projected.data(), qkv.size() * sizeof(float));
      const auto t0 = std::chrono::steady_clock::now();
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < NH; ++h) {
          HeadAttention a;
          a.n = n, a.d = s.d;
          a.q = qkv.data() + b * n * ld + h * s.d, a.k = a.q + H, a.v = a.q + 2 * H, a.ld_qkv = ld;
          if (s.bias) a.bias = bias.data() + h * n * n, a.ld_bias = n;
          const int64_t map = reuse_maps ? h : (b * s.layers + l) * NH + h;
          a.probs = maps.data() + map * n * n, a.ld_probs = n;
          a.ctx = ctx.data() + b * n * H + h * s.d, a.ld_ctx = H;
          attend_head_with(a, Scaling::DivideScores, isa);
        }
      attending += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    best = std::min(best, attending);
  }
  volatile float sink = maps[maps.size() / 2] + ctx[ctx.size() / 3] + other[0];
  (void)sink;
  return best / static_cast<double>(B * n);
}

bool parse(int argc, char** argv, Shape& s) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool value = i + 1 < argc;
    if (a == "--bias") s.bias = true;
    else if (a == "--n" && value) s.n = std::atoll(argv[++i]);
    else if (a == "--batch-tokens" && value) s.batch_tokens = std::atoll(argv[++i]);
    else if (a == "--heads" && value) s.heads = std::atoll(argv[++i]);
    else if (a == "--head-dim" && value) s.d = std::atoll(argv[++i]);
    else if (a == "--layers" && value) s.layers = std::atoll(argv[++i]);
    else if (a == "--reps" && value) s.reps = std::atoi(argv[++i]);
    else return false;
  }
  return s.n > 0 && s.batch_tokens > 0 && s.heads > 0 && s.d > 0 && s.layers > 0 && s.reps > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Shape s;
  if (!parse(argc, argv, s)) {
    std::fprintf(stderr,
                 "usage: attention_kernel_bench [--n 53] [--batch-tokens 350] [--heads 12] [--head-dim 64] [--layers 12] "
                 "[--bias] [--reps 30] (all positive)\n");
    return 2;
  }
  std::printf("%lld examples of %lld tokens per batch, %lld heads of %lld, %lld layers%s; best of %d\n",
              static_cast<long long>(std::max<int64_t>(1, s.batch_tokens / s.n)), static_cast<long long>(s.n),
              static_cast<long long>(s.heads), static_cast<long long>(s.d), static_cast<long long>(s.layers),
              s.bias ? ", with a bias" : "", s.reps);
  for (KernelIsa isa : {KernelIsa::Avx512, KernelIsa::Avx2, KernelIsa::Plain}) {
    if (!cpu_has(isa)) continue;
    const double fresh = time_batch(s, isa, false), reused = time_batch(s, isa, true);
    std::printf("%-7s %7.2f us per token; maps written to one reused place %7.2f (writing them costs %.2f)\n",
                kernel_isa_name(isa), fresh, reused, fresh - reused);
  }
  return 0;
}
