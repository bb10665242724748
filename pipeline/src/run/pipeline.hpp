#pragma once
// The streaming TBB pipeline: read rows (serial, in order) -> tokenize, bucket by length, forward,
// run the detectors, store attention (parallel, one block of rows per token) -> commit the block
// (serial, in order).
// A block is `block_rows` consecutive rows of the dataset; blocks are the unit of sharding, of
// commits and of resume, so a resumed run batches exactly as an uninterrupted one.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>

#include "dataset/dataset.hpp"
#include "encoder/encoder.hpp"
#include "plugin_host/plugin_host.hpp"
#include "tokenizer/tokenizer.hpp"
#include "plugin_host/detector_runner.hpp"
#include "run/head_importance.hpp"
#include "store/layout_file.hpp"
#include "store/output_session.hpp"

namespace attnscan {

// Filled from the RunConfig by run_job (the option table holds the defaults; none are written here).
struct PipelineSettings {
  uint64_t block_rows{};
  int inflight{};                // blocks in flight (TBB tokens)
  int64_t batch_tokens{};        // padded tokens per forward batch
  std::size_t max_length{};      // 0: the model's maximum
  uint64_t attention_every{};    // store attention of rows whose index % k == 0; 0: none
  int shard_index = 0, shard_count = 1;
  uint64_t max_rows = 0;  // 0: all
  LayoutParams layout;
  const DetectorRunner* detectors = nullptr;  // its detectors score every example, in their order
  bool value_norms = false;  // the forward computes them: stored (layout.value_norms) or a detector's map: norm
  MixingRequest mixing;      // the encoder computes them: stored (layout.layer_maps) or a detector's map
  ImportanceSettings importance;  // head importance of sampled rows (its outputs are in layout.scores)
};

struct PipelineProgress {
  std::atomic<uint64_t> examples{0}, tokens{0}, blocks{0};
  std::atomic<uint64_t> batches{0};  // forward batches done (and scored), committed or not
  std::atomic<double> fraction{0.0};  // share of the input up to the last committed block
};

struct PipelineResult {
  bool reached_end = false;  // false when stopped early
  uint64_t rows_total = 0;   // rows seen in the dataset (all shards' rows, bad rows included)
};

using BlockDone = std::function<bool(uint64_t block)>;

// Where each of this shard's blocks starts in the output's attention values, from a tokenizing
// pre-pass over the input (no model). Lets attention go straight to its final place.
AttentionPlan plan_attention(PairReader& reader, const Tokenizer& tokenizer, const PipelineSettings& settings);
using BlockCommit = std::function<void(uint64_t block, uint64_t rows_in_block, LayoutChunk&& chunk)>;
// Receives stored attention as soon as a batch is done (called concurrently for different blocks):
// `values` values of the storage dtype for the example whose attention starts at `offset` values
// into its block. The block's chunk reaches BlockCommit only after all its attention was sunk, so
// memory stays bounded by batches, not blocks.
using AttentionSink =
    std::function<void(uint64_t block, uint64_t offset, const uint8_t* data, std::size_t bytes)>;

PipelineResult run_pipeline(PairReader& reader, const Tokenizer& tokenizer, const Transformer& encoder,
                            const PipelineSettings& settings, const BlockDone& done, const AttentionSink& sink,
                            const BlockCommit& commit, const std::atomic<bool>& stop, PipelineProgress& progress);

}  // namespace attnscan
