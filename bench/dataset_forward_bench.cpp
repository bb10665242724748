// Forward-only throughput on a real dataset: the same tokenization, blocks and length-bucketed
// batches as `attnscan run`, timing only Transformer::forward. The baseline for bench/run_bench.py.
//
//   dataset_forward_bench TSV_FILE COL_A COL_B [--header] [--block-rows 256] [--batch-tokens 768]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "dataset/dataset.hpp"
#include "encoder/encoder.hpp"
#include "model/model_location.hpp"
#include "run/batching.hpp"
#include "model/model_tokenizer.hpp"

using namespace attnscan;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: dataset_forward_bench TSV COL_A COL_B [--header] [--block-rows N] [--batch-tokens N]\n");
    return 2;
  }
  DatasetSpec spec;
  spec.path = argv[1];
  spec.header = false;
  spec.sentence_a.index = std::atoi(argv[2]);
  spec.sentence_b.index = std::atoi(argv[3]);
  std::size_t block_rows = 256;
  int64_t batch_tokens = 768;
  for (int i = 4; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--header")) spec.header = true;
    else if (!std::strcmp(argv[i], "--block-rows") && i + 1 < argc) block_rows = std::strtoul(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--batch-tokens") && i + 1 < argc) batch_tokens = std::atoll(argv[++i]);
  }
  auto dir = default_model_dir();
  auto model = load_model(dir);
  auto tok = load_tokenizer(dir, model.config);
  std::vector<std::vector<Encoding>> blocks(1);
  auto reader = open_dataset(spec);
  std::size_t pairs = 0;
  while (auto r = reader->next()) {
    if (blocks.back().size() == block_rows) blocks.emplace_back();
    blocks.back().push_back(tok.encode_pair(r->a, r->b));
    ++pairs;
  }
  std::vector<std::vector<TokenBatch>> batches(blocks.size());  // per block, prepared outside the timing
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    std::vector<std::size_t> lengths;
    for (const auto& e : blocks[b]) lengths.push_back(e.size());
    const auto lh = static_cast<uint64_t>(model.config.num_layers * model.config.num_heads);
    for (const auto& members : bucket_batches(lengths, batch_tokens, kBatchAttentionValues, lh)) {
      std::vector<const Encoding*> ptrs;
      for (auto m : members) ptrs.push_back(&blocks[b][m]);
      batches[b].push_back(TokenBatch::from_encodings(ptrs, tok.pad_id()));
    }
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double best = 0;
  for (int streams : {1, 2}) {  // one stream x all threads, or two streams x half the threads each
    if (streams > cores) continue;
    EncoderOptions o;
    o.threads = std::max(1, cores / streams);
    Transformer enc(model, o);
    enc.forward(batches[0][0]);  // warm-up
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int w = 0; w < streams; ++w)
      workers.emplace_back([&, w] {
        for (std::size_t b = static_cast<std::size_t>(w); b < batches.size(); b += static_cast<std::size_t>(streams))
          for (const auto& batch : batches[b]) enc.forward(batch);
      });
    for (auto& t : workers) t.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("forward-only: %d stream(s) x %d thread(s): %zu pairs in %.2f s = %.1f pairs/s\n", streams, o.threads,
                pairs, s, double(pairs) / s);
    best = std::max(best, double(pairs) / s);
  }
  std::printf("forward-only best: %.1f pairs/s\n", best);
  return 0;
}
