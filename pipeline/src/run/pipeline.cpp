#include "run/pipeline.hpp"

#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <deque>
#include <memory>

#include "run/batching.hpp"
#include "run/example_columns.hpp"

namespace attnscan {

namespace {

struct Row {
  uint64_t index = 0;
  std::optional<PairRecord> record;
  std::optional<RejectedRow> reject;
};

struct BlockWork {
  uint64_t number = 0, rows = 0;
  std::vector<Row> items;
  LayoutChunk chunk;
};

// Rows in order, each a record or a rejected row, with its 0-based index in the dataset.
class RowStream {
 public:
  RowStream(PairReader& r, uint64_t max_rows) : reader_(r), max_rows_(max_rows) {
    reader_.on_reject([this](const RejectedRow& row) { queue_.push_back({reader_.rows_read() - 1, std::nullopt, row}); });
  }
  bool next(Row& out) {
    if (max_rows_ && taken_ >= max_rows_) return false;
    if (queue_.empty()) {
      auto rec = reader_.next();
      if (rec) queue_.push_back({reader_.rows_read() - 1, std::move(rec), std::nullopt});
    }
    if (queue_.empty()) return false;
    out = std::move(queue_.front());
    queue_.pop_front();
    ++taken_;
    return true;
  }

 private:
  PairReader& reader_;
  uint64_t max_rows_ = 0, taken_ = 0;
  std::deque<Row> queue_;
};

}  // namespace

PipelineResult run_pipeline(PairReader& reader, const WordPieceTokenizer& tokenizer, const BertEncoder& encoder,
                            const PipelineSettings& s, const BlockDone& done, const BlockCommit& commit,
                            const std::atomic<bool>& stop, PipelineProgress& progress) {
  RowStream rows(reader, s.max_rows);
  PipelineResult result;
  std::optional<Row> pending;  // first row of the next block
  bool exhausted = false;
  const std::size_t vs = attention_value_size(s.layout.dtype);

  auto read_block = [&](tbb::flow_control& fc) -> std::shared_ptr<BlockWork> {
    for (;;) {
      if (stop.load()) {
        fc.stop();
        return nullptr;
      }
      Row row;
      if (pending) {
        row = std::move(*pending);
        pending.reset();
      } else if (!rows.next(row)) {
        exhausted = true;
        result.reached_end = true;
        fc.stop();
        return nullptr;
      }
      auto work = std::make_shared<BlockWork>();
      work->number = row.index / s.block_rows;
      const bool mine = static_cast<int>(work->number % static_cast<uint64_t>(s.shard_count)) == s.shard_index &&
                        !done(work->number);
      auto take = [&](Row&& r) {
        ++work->rows;
        result.rows_total = r.index + 1;
        if (mine) work->items.push_back(std::move(r));
      };
      take(std::move(row));
      Row next;
      while (rows.next(next)) {
        if (next.index / s.block_rows != work->number) {
          pending = std::move(next);
          break;
        }
        take(std::move(next));
      }
      if (!pending) exhausted = true;
      if (mine) return work;
      if (exhausted) {
        result.reached_end = true;
        fc.stop();
        return nullptr;
      }
    }
  };

  auto process_block = [&](std::shared_ptr<BlockWork> work) -> std::shared_ptr<BlockWork> {
    struct Item {
      std::size_t slot;
      Encoding enc;
    };
    std::vector<Item> items;
    for (std::size_t i = 0; i < work->items.size(); ++i)
      if (work->items[i].record) {
        const auto& r = *work->items[i].record;
        items.push_back({i, tokenizer.encode_pair(r.a, r.b, s.max_length)});
      }
    // Each stored example's place in the block's attention buffer, known before the forward.
    const std::size_t per_pair = s.layout.layers.size() * s.layout.heads.size();
    std::vector<std::size_t> lengths;
    std::vector<int64_t> offset(items.size(), -1);
    std::size_t values = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::size_t n = items[i].enc.size();
      lengths.push_back(n);
      if (s.attention_every > 0 && work->items[items[i].slot].index % s.attention_every == 0) {
        offset[i] = static_cast<int64_t>(values);
        values += per_pair * n * n;
      }
    }
    work->chunk.attention.resize(values * vs);
    for (const auto& members : bucket_batches(lengths, s.batch_tokens)) {
      std::vector<const Encoding*> batch;
      for (auto m : members) batch.push_back(&items[m].enc);
      auto out = encoder.forward(TokenBatch::from_encodings(batch, tokenizer.pad_id()));
      // Detector plugins will score these examples here, from `out`.
      for (std::size_t k = 0; k < members.size(); ++k)
        if (offset[members[k]] >= 0)
          write_attention(work->chunk.attention.data() + static_cast<std::size_t>(offset[members[k]]) * vs, out,
                          static_cast<int64_t>(k), static_cast<int64_t>(items[members[k]].enc.size()), s.layout);
    }
    // Metadata in input order; rejected rows keep their place in /rejects.
    std::size_t next_item = 0;
    for (std::size_t i = 0; i < work->items.size(); ++i) {
      const auto& row = work->items[i];
      if (row.record) {
        append_example(work->chunk, row.index, *row.record, items[next_item].enc, offset[next_item]);
        ++next_item;
      } else {
        append_reject(work->chunk, row.index, *row.reject);
      }
    }
    work->items.clear();
    return work;
  };

  auto commit_block = [&](std::shared_ptr<BlockWork> work) {
    const auto& e = work->chunk.examples;
    uint64_t tokens = 0, truncated = 0;
    for (std::size_t i = 0; i < e.size(); ++i) {
      tokens += e.n_tokens[i];
      truncated += e.truncated[i];
    }
    const uint64_t examples = e.size(), skipped = work->chunk.rejects.size(), rows_in = work->rows;
    commit(work->number, rows_in, std::move(work->chunk));
    progress.rows += rows_in;
    progress.examples += examples;
    progress.tokens += tokens;
    progress.skipped += skipped;
    progress.truncated += truncated;
    progress.blocks += 1;
  };

  tbb::task_arena arena(std::max(1, s.inflight));
  arena.execute([&] {
    tbb::parallel_pipeline(
        static_cast<std::size_t>(std::max(1, s.inflight)),
        tbb::make_filter<void, std::shared_ptr<BlockWork>>(tbb::filter_mode::serial_in_order, read_block) &
            tbb::make_filter<std::shared_ptr<BlockWork>, std::shared_ptr<BlockWork>>(tbb::filter_mode::parallel,
                                                                                    process_block) &
            tbb::make_filter<std::shared_ptr<BlockWork>, void>(tbb::filter_mode::serial_in_order, commit_block));
  });
  if (stop.load()) result.reached_end = false;
  return result;
}

}  // namespace attnscan
