#include "run/pipeline.hpp"

#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <numeric>

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

template <typename T>
void move_append(std::vector<T>& dst, std::vector<T>& src) {
  dst.insert(dst.end(), std::make_move_iterator(src.begin()), std::make_move_iterator(src.end()));
}

}  // namespace

void append_chunk(LayoutChunk& dst, LayoutChunk&& src, std::size_t value_size) {
  const uint64_t tok_base = dst.tokens.size();
  const auto value_base = static_cast<int64_t>(dst.attention.size() / value_size);
  auto& d = dst.examples;
  auto& s = src.examples;
  for (auto& o : s.token_offset) o += tok_base;
  for (auto& o : s.attention_offset)
    if (o >= 0) o += value_base;
  move_append(d.index, s.index);
  move_append(d.row, s.row);
  move_append(d.id, s.id);
  move_append(d.sentence_a, s.sentence_a);
  move_append(d.sentence_b, s.sentence_b);
  move_append(d.label, s.label);
  move_append(d.has_label, s.has_label);
  move_append(d.label_value, s.label_value);
  move_append(d.n_tokens, s.n_tokens);
  move_append(d.tokens_a, s.tokens_a);
  move_append(d.tokens_b, s.tokens_b);
  move_append(d.truncated, s.truncated);
  move_append(d.token_offset, s.token_offset);
  move_append(d.attention_offset, s.attention_offset);
  move_append(dst.tokens.id, src.tokens.id);
  move_append(dst.tokens.text, src.tokens.text);
  move_append(dst.tokens.segment, src.tokens.segment);
  move_append(dst.tokens.word_index, src.tokens.word_index);
  move_append(dst.tokens.special, src.tokens.special);
  move_append(dst.attention, src.attention);
  move_append(dst.rejects.index, src.rejects.index);
  move_append(dst.rejects.line, src.rejects.line);
  move_append(dst.rejects.file, src.rejects.file);
  move_append(dst.rejects.reason, src.rejects.reason);
}

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
    // Length buckets: sort by length, then fill batches up to the padded-token budget.
    std::vector<std::size_t> order(items.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return items[a].enc.size() < items[b].enc.size(); });
    std::vector<LayoutChunk> per_slot(work->items.size());
    for (std::size_t start = 0; start < order.size();) {
      std::size_t end = start + 1;
      while (end < order.size() &&
             static_cast<int64_t>((end - start + 1) * items[order[end]].enc.size()) <= s.batch_tokens)
        ++end;
      std::vector<const Encoding*> batch;
      for (std::size_t k = start; k < end; ++k) batch.push_back(&items[order[k]].enc);
      auto out = encoder.forward(TokenBatch::from_encodings(batch, tokenizer.pad_id()));
      for (std::size_t k = start; k < end; ++k) {
        const auto& it = items[order[k]];
        const auto& row = work->items[it.slot];
        const bool store = s.attention_every > 0 && row.index % s.attention_every == 0;
        // Detector plugins will score the example here, from `out`, before attention is dropped.
        append_example(per_slot[it.slot], row.index, *row.record, it.enc, store ? &out : nullptr,
                       static_cast<int64_t>(k - start), s.layout);
      }
      start = end;
    }
    for (std::size_t i = 0; i < work->items.size(); ++i) {
      if (work->items[i].reject) append_reject(per_slot[i], work->items[i].index, *work->items[i].reject);
      append_chunk(work->chunk, std::move(per_slot[i]), vs);
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
