// Cost of head importance per pair against the plain forward of the same pairs, in the same run:
// the forward a run does anyway (attention only), ablation importance, gradient importance; and the
// peak memory each adds.
//
//   importance_bench PAWS_TSV MODEL_DIR[:classification|:mlm] ... [--pairs N] [--threads N]
//
// PAWS_TSV: ../shared/datasets/paws/dev.tsv (id, sentence1, sentence2, label with a header). Each
// model directory runs the forward and ablation; a suffix adds gradient importance with that head
// (classification uses the PAWS label as the class). The pairs are batched by length, at most 768
// padded tokens a batch, as a run batches them.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "encoder/encoder.hpp"
#include "model/model_location.hpp"
#include "model/model_tokenizer.hpp"
#include "run/batching.hpp"
#include "run/head_importance.hpp"

using namespace attnscan;
using Clock = std::chrono::steady_clock;

namespace {

struct Pair {
  std::string a, b, label;
};

std::vector<Pair> read_paws(const std::string& path, std::size_t count) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::vector<Pair> out;
  while (out.size() < count && std::getline(in, line)) {
    std::vector<std::string> f;
    for (std::size_t at = 0;;) {
      auto tab = line.find('\t', at);
      f.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
      if (tab == std::string::npos) break;
      at = tab + 1;
    }
    if (f.size() >= 4) out.push_back({f[1], f[2], f[3]});
  }
  return out;
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

template <typename F>
double seconds(F&& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: importance_bench PAWS_TSV MODEL_DIR[:classification|:mlm] ... [--pairs N] [--threads N]\n");
    return 2;
  }
  std::size_t count = 48;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> models;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--pairs") && i + 1 < argc) count = std::strtoul(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else models.push_back(argv[i]);
  }
  const auto pairs = read_paws(argv[1], count);
  std::printf("%zu PAWS pairs, %d thread(s), one stream; times per pair, best of 2\n", pairs.size(), threads);
  for (const auto& spec : models) {
    const auto colon = spec.rfind(':');
    const std::string dir = colon == std::string::npos ? spec : spec.substr(0, colon);
    const auto objective = colon == std::string::npos ? std::nullopt : head_objective_named(spec.substr(colon + 1));
    const LoadedModel model = load_model(dir);
    const Tokenizer tok = load_tokenizer(dir, model.config);
    std::optional<TaskHead> head;
    if (objective) head = load_task_head(model, *objective);
    EncoderOptions opts;
    opts.threads = threads;
    const Transformer enc(model, opts, head ? &*head : nullptr);
    std::vector<Encoding> encodings;
    std::vector<std::size_t> lengths;
    std::size_t tokens = 0;
    for (const auto& p : pairs) {
      encodings.push_back(tok.encode_pair(p.a, p.b));
      lengths.push_back(encodings.back().size());
      tokens += encodings.back().size();
    }
    const auto lh = static_cast<uint64_t>(model.config.num_layers * model.config.num_heads);
    ImportanceSettings settings;
    settings.ablation = true;
    settings.head = head ? &*head : nullptr;
    settings.mask_id = tok.vocab().find(tok.config().mask_token);
    struct Batch {
      TokenBatch tokens;
      std::vector<const Encoding*> rows;
      std::vector<int64_t> classes;
    };
    std::vector<Batch> batches;
    for (const auto& members : bucket_batches(lengths, 768, kBatchAttentionValues, lh)) {
      Batch b;
      for (auto m : members) {
        b.rows.push_back(&encodings[m]);
        b.classes.push_back(std::atoll(pairs[m].label.c_str()) % 2);
      }
      b.tokens = TokenBatch::from_encodings(b.rows, tok.pad_id());
      batches.push_back(std::move(b));
    }
    auto run = [&](auto&& each) {
      double best = 1e30;
      for (int rep = 0; rep < 2; ++rep)
        best = std::min(best, seconds([&] {
                          for (const auto& b : batches) each(b);
                        }));
      return best / static_cast<double>(pairs.size());
    };
    const double rss0 = peak_rss_mb();
    const double forward = run([&](const Batch& b) { enc.forward(b.tokens); });
    const double rss_forward = peak_rss_mb();
    settings.head = nullptr;
    const double ablation = run([&](const Batch& b) {
      enc.head_importance(b.tokens, importance_request(settings, b.rows, b.classes));
    });
    const double rss_ablation = peak_rss_mb();
    std::printf("\n%s: %s, %.1f tokens per pair\n", dir.c_str(), describe(model.config).c_str(),
                static_cast<double>(tokens) / static_cast<double>(pairs.size()));
    const double L = static_cast<double>(model.config.num_layers), H = static_cast<double>(model.config.num_heads);
    std::printf("  forward (attention, as a run)  %9.2f ms/pair  1.00x  peak RSS %.0f MB\n", forward * 1e3, rss_forward);
    std::printf("  ablation importance            %9.2f ms/pair  %5.1fx  peak RSS %.0f MB (+%.0f)  "
                "[layer-forwards: H*L*(L+1)/2 = %.0f, vs L*H full forwards = %.0f]\n",
                ablation * 1e3, ablation / forward, rss_ablation, rss_ablation - rss_forward, H * L * (L + 1) / 2,
                L * H * L);
    if (head) {
      settings.head = &*head;
      settings.ablation = false;
      const double gradient = run([&](const Batch& b) {
        enc.head_importance(b.tokens, importance_request(settings, b.rows, b.classes));
      });
      const double rss_gradient = peak_rss_mb();
      std::printf("  gradient importance (%s)  %9.2f ms/pair  %5.1fx  peak RSS %.0f MB (+%.0f)\n",
                  to_string(head->objective), gradient * 1e3, gradient / forward, rss_gradient, rss_gradient - rss_ablation);
    }
    (void)rss0;
  }
  return 0;
}
