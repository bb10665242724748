#include "run/pipeline.hpp"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <memory>

#include "plugin_host/attention_maps.hpp"
#include "run/batching.hpp"
#include "run/commit_thread.hpp"
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
  double fraction = 0;  // share of the input read when the block was complete
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

// Groups rows into blocks of block_rows and hands out this shard's blocks that `wanted` accepts;
// the rows of other blocks are read and counted, nothing more.
class BlockReader {
 public:
  BlockReader(PairReader& r, const PipelineSettings& s, BlockDone skip)
      : reader_(r), rows_(r, s.max_rows), s_(s), skip_(std::move(skip)) {}

  std::shared_ptr<BlockWork> next() {
    for (;;) {
      Row row;
      if (pending_) {
        row = std::move(*pending_);
        pending_.reset();
      } else if (!rows_.next(row)) {
        return nullptr;
      }
      auto work = std::make_shared<BlockWork>();
      work->number = row.index / s_.block_rows;
      const bool mine = static_cast<int>(work->number % static_cast<uint64_t>(s_.shard_count)) == s_.shard_index &&
                        !(skip_ && skip_(work->number));
      auto take = [&](Row&& r) {
        ++work->rows;
        rows_total_ = r.index + 1;
        if (mine) work->items.push_back(std::move(r));
      };
      take(std::move(row));
      Row next;
      while (rows_.next(next)) {
        if (next.index / s_.block_rows != work->number) {
          pending_ = std::move(next);
          break;
        }
        take(std::move(next));
      }
      // The next block's first row has been read already; close enough for progress.
      work->fraction = reader_.fraction();
      if (mine) return work;
    }
  }
  uint64_t rows_total() const { return rows_total_; }

 private:
  PairReader& reader_;
  RowStream rows_;
  const PipelineSettings& s_;
  BlockDone skip_;
  std::optional<Row> pending_;
  uint64_t rows_total_ = 0;
};

std::vector<std::string> forms(const std::vector<TreeWord>& tree) {
  std::vector<std::string> out;
  for (const auto& w : tree) out.push_back(w.form);
  return out;
}

// A pair, a single sentence, or (annotated datasets) the trees' words one by one.
Encoding encode_record(const PairRecord& r, const Tokenizer& tok, std::size_t max_length) {
  if (!r.tree_a.empty()) {
    const auto b = forms(r.tree_b);
    return tok.encode_words(forms(r.tree_a), r.has_b ? &b : nullptr, max_length);
  }
  return r.has_b ? tok.encode_pair(r.a, r.b, max_length) : tok.encode_single(r.a, max_length);
}

std::vector<Encoding> tokenize_block(const BlockWork& work, const Tokenizer& tok, std::size_t max_length) {
  std::vector<Encoding> out;
  for (const auto& row : work.items)
    if (row.record) out.push_back(encode_record(*row.record, tok, max_length));
  return out;
}

// The trees of an annotated record as detectors get them (empty without annotations).
std::vector<std::vector<sdk::WordAnnotation>> word_annotations(const PairRecord& r) {
  std::vector<std::vector<sdk::WordAnnotation>> out;
  if (r.tree_a.empty()) return out;
  for (const auto* tree : {&r.tree_a, &r.tree_b}) {
    if (tree == &r.tree_b && !r.has_b) break;
    auto& sentence = out.emplace_back();
    for (const auto& w : *tree) sentence.push_back({w.head, w.relation});
  }
  return out;
}

// Attention values of each example of a block (0 when not stored), in input order.
std::vector<uint64_t> attention_sizes(const BlockWork& work, const std::vector<Encoding>& encodings,
                                      const PipelineSettings& s) {
  const uint64_t per_pair = s.layout.layers.size() * s.layout.heads.size();
  std::vector<uint64_t> sizes;
  std::size_t e = 0;
  for (const auto& row : work.items) {
    if (!row.record) continue;
    const uint64_t n = encodings[e++].size();
    sizes.push_back(s.attention_every > 0 && row.index % s.attention_every == 0 ? per_pair * n * n : 0);
  }
  return sizes;
}

template <typename Read, typename Work, typename Finish>
void run_blocks(int inflight, Read&& read, Work&& work, Finish&& finish) {
  tbb::task_arena arena(std::max(1, inflight));
  arena.execute([&] {
    // One block more than the arena has threads: a stream whose block is done before an older one's (held
    // for the in-order commit) reads and computes the next block.
    tbb::parallel_pipeline(
        static_cast<std::size_t>(std::max(1, inflight) + 1),
        tbb::make_filter<void, std::shared_ptr<BlockWork>>(tbb::filter_mode::serial_in_order, read) &
            tbb::make_filter<std::shared_ptr<BlockWork>, std::shared_ptr<BlockWork>>(tbb::filter_mode::parallel, work) &
            tbb::make_filter<std::shared_ptr<BlockWork>, void>(tbb::filter_mode::serial_in_order, finish));
  });
}

// Example k of a forward without the batch's padding: attention [L][H][n][n], value norms [L][H][n]
// (empty when the forward computed none). Its attention is read where the forward wrote it (which
// outlives these maps) when the forward stored it compact or as long as its batch, or when `contiguous` is
// false (then `stride` is the batch's length: each head's n x n block at the top left of an S x S one);
// else copied out.
struct UnpaddedMaps {
  const float* attention = nullptr;
  std::size_t stride = 0;  // of attention's rows: n where contiguous
  std::unique_ptr<float[]> copied;  // not zeroed first: every value is copied in
  std::vector<float> value_norms;
};

UnpaddedMaps unpadded_maps(const EncoderOutput& out, int64_t k, std::size_t n, bool contiguous) {
  UnpaddedMaps m;
  const std::size_t lh = static_cast<std::size_t>(out.layers * out.heads);
  const auto S = static_cast<std::size_t>(out.attention_stride(k));
  if (n == S || !contiguous) {
    m.attention = out.attention_at(k, 0, 0);
    m.stride = S;
  } else {
    m.stride = n;
    m.copied.reset(new float[lh * n * n]);
    float* dst = m.copied.get();
    for (int64_t l = 0; l < out.layers; ++l)
      for (int64_t h = 0; h < out.heads; ++h) {
        const float* a = out.attention_at(k, l, h);
        for (std::size_t q = 0; q < n; ++q, dst += n) std::copy(a + q * S, a + q * S + n, dst);
      }
    m.attention = m.copied.get();
  }
  if (!out.value_norms.empty()) {
    m.value_norms.resize(lh * n);
    for (int64_t l = 0; l < out.layers; ++l)
      for (int64_t h = 0; h < out.heads; ++h)
        std::copy_n(out.value_norms_at(k, l, h), n, m.value_norms.begin() + static_cast<std::ptrdiff_t>((l * out.heads + h) * n));
  }
  return m;
}

// [L*H][n] -> [n][L*H]: value norms as stored, one row per token.
std::vector<float> token_major(const std::vector<float>& per_head, int64_t lh, std::size_t n) {
  std::vector<float> out(per_head.size());
  for (int64_t i = 0; i < lh; ++i)
    for (std::size_t j = 0; j < n; ++j) out[j * static_cast<std::size_t>(lh) + static_cast<std::size_t>(i)] = per_head[static_cast<std::size_t>(i) * n + j];
  return out;
}

// The encoder's layer maps of one forward's examples: value zeroing and ALTI ([L][n][n] per
// example, from context_mixing) and ALTI rolled out across layers.
struct BatchMixing {
  ContextMixing computed;
  std::vector<std::vector<float>> alti_rollout;

  MixingMaps of(std::size_t k) const {
    auto at = [&](const std::vector<std::vector<float>>& v) { return k < v.size() ? v[k].data() : nullptr; };
    return {at(computed.value_zeroing), at(computed.alti), at(alti_rollout)};
  }
};

// Example k's [L][n][n] layer map `name` (kLayerMaps): rollout from its attention, the others computed.
std::vector<float> stored_layer_map(const std::string& name, const UnpaddedMaps& maps, const BatchMixing& mixing,
                                    std::size_t k, int64_t layers, int64_t heads, std::size_t n) {
  if (name == "rollout") {
    if (maps.stride != n) throw Error("internal: rollout of padded attention");
    return attention_rollout(maps.attention, layers, heads, n);
  }
  const float* computed = mixing.of(k).get(parse_attention_map(name));
  if (!computed) throw Error("internal: " + name + " was not computed for this batch");
  return std::vector<float>(computed, computed + static_cast<std::size_t>(layers) * n * n);
}

BatchMixing batch_mixing(const Transformer& encoder, const TokenBatch& batch, const MixingRequest& request) {
  BatchMixing m;
  if (!request.value_zeroing && !request.alti) return m;
  m.computed = encoder.context_mixing(batch, request);
  for (std::size_t k = 0; k < m.computed.alti.size(); ++k)
    m.alti_rollout.push_back(layer_rollout(m.computed.alti[k].data(), m.computed.layers,
                                           static_cast<std::size_t>(batch.lengths[k])));
  return m;
}

// Runs every detector on one forward's examples; writes their scores at each example's place.
void score_batch(const DetectorRunner& runner, const std::vector<std::size_t>& members,
                 const std::vector<Encoding>& encodings, const PairTemplate& pair_template,
                 const std::vector<const Row*>& rows, const EncoderOutput& out,
                 const std::vector<UnpaddedMaps>& maps, const BatchMixing& mixing, LayoutChunk& chunk) {
  const int64_t L = out.layers, H = out.heads;
  const std::size_t lh = static_cast<std::size_t>(L * H);
  std::vector<sdk::Example> examples(members.size());
  for (std::size_t k = 0; k < members.size(); ++k) {
    const Encoding& enc = encodings[members[k]];
    auto& ex = examples[k];
    ex.id = rows[members[k]]->record->id;
    ex.word_annotations = word_annotations(*rows[members[k]]->record);
    ex.layers = L;
    ex.heads = H;
    for (const KeyRange& r : out.key_ranges)
      ex.key_ranges.push_back({static_cast<int32_t>(r.before), static_cast<int32_t>(r.after)});
    for (std::size_t t = 0; t < enc.size(); ++t) ex.tokens.push_back(detector_token(enc, t, pair_template));
    ex.attention = maps[k].attention;
    ex.value_norms = maps[k].value_norms.empty() ? nullptr : maps[k].value_norms.data();
  }
  // Only the maps a detector scores go to the detectors (to their worker processes: copied there).
  auto scored = [&](AttentionMap map) {
    return std::any_of(runner.detectors().begin(), runner.detectors().end(), [&](const auto& d) { return d.map == map; });
  };
  const bool vz = scored(AttentionMap::ValueZeroing), alti = scored(AttentionMap::Alti),
             alti_rollout = scored(AttentionMap::AltiRollout);
  std::vector<MixingMaps> mixing_maps;
  for (std::size_t k = 0; k < members.size(); ++k) {
    const MixingMaps m = mixing.of(k);
    mixing_maps.push_back({vz ? m.value_zeroing : nullptr, alti ? m.alti : nullptr, alti_rollout ? m.alti_rollout : nullptr});
  }
  std::vector<int64_t> strides;  // the worker processes take the padded blocks as they are
  for (const auto& m : maps) strides.push_back(static_cast<int64_t>(m.stride));
  const auto all_results = runner.score(examples, mixing_maps, strides);
  for (std::size_t di = 0; di < runner.detectors().size(); ++di) {
    const auto& d = runner.detectors()[di];
    const auto& results = all_results[di];
    for (std::size_t o = 0; o < d.info.outputs.size(); ++o) {
      auto& cols = chunk.scores.at(d.info.name + "/" + d.info.outputs[o]);
      for (std::size_t k = 0; k < members.size(); ++k) {
        std::copy(results[k].scores.begin() + static_cast<std::ptrdiff_t>(o * lh),
                  results[k].scores.begin() + static_cast<std::ptrdiff_t>((o + 1) * lh),
                  cols.values.begin() + static_cast<std::ptrdiff_t>(members[k] * lh));
        std::copy_n(results[k].baseline.begin() + static_cast<std::ptrdiff_t>(o * static_cast<std::size_t>(L)), L,
                    cols.baseline.begin() + static_cast<std::ptrdiff_t>(members[k] * static_cast<std::size_t>(L)));
      }
    }
  }
}

// Each row's class for a classification head (-1 where not sampled): checked before the block runs
// the model, so a bad label stops the run with nothing of this block written.
std::vector<int64_t> record_classes(const std::vector<const Row*>& rows, const ImportanceSettings& s) {
  std::vector<int64_t> out(rows.size(), -1);
  if (!s.head || s.head->objective != HeadObjective::Classification) return out;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (s.sampled(rows[i]->index)) out[i] = record_class(s, *rows[i]->record);
  return out;
}

// Head importance of the batch's sampled members, written at each one's place in the block's
// importance outputs.
void importance_batch(const Transformer& encoder, const ImportanceSettings& s, const std::vector<std::size_t>& members,
                      const std::vector<Encoding>& encodings, const std::vector<const Row*>& rows,
                      const std::vector<int64_t>& classes, int32_t pad_id, LayoutChunk& chunk) {
  std::vector<std::size_t> sampled;
  std::vector<const Encoding*> batch;
  std::vector<int64_t> batch_classes;
  for (auto m : members)
    if (s.sampled(rows[m]->index)) {
      sampled.push_back(m);
      batch.push_back(&encodings[m]);
      batch_classes.push_back(classes[m]);
    }
  if (sampled.empty()) return;
  const HeadImportance imp =
      encoder.head_importance(TokenBatch::from_encodings(batch, pad_id), importance_request(s, batch, batch_classes));
  const auto lh = static_cast<std::size_t>(imp.layers * imp.heads);
  auto store = [&](const char* output, const std::vector<float>& values) {
    auto& cols = chunk.scores.at(std::string(kImportanceDetector) + "/" + output);
    for (std::size_t k = 0; k < sampled.size(); ++k) {
      std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(k * lh), lh,
                  cols.values.begin() + static_cast<std::ptrdiff_t>(sampled[k] * lh));
      std::fill_n(cols.baseline.begin() + static_cast<std::ptrdiff_t>(sampled[k] * static_cast<std::size_t>(imp.layers)),
                  imp.layers, 0.0f);  // a head that changes nothing
    }
  };
  if (s.ablation) store(kAblationOutput, imp.ablation);
  if (s.head) store(kGradientOutput, imp.gradient);
}

}  // namespace

AttentionPlan plan_attention(PairReader& reader, const Tokenizer& tokenizer, const PipelineSettings& s) {
  BlockReader blocks(reader, s, nullptr);
  AttentionPlan plan;
  plan.exact = true;
  run_blocks(
      s.inflight,
      [&](tbb::flow_control& fc) -> std::shared_ptr<BlockWork> {
        auto w = blocks.next();
        if (!w) fc.stop();
        return w;
      },
      [&](std::shared_ptr<BlockWork> w) {
        uint64_t total = 0;
        for (auto v : attention_sizes(*w, tokenize_block(*w, tokenizer, s.max_length), s)) total += v;
        w->rows = total;  // reused to carry the block's value count
        w->items.clear();
        return w;
      },
      [&](std::shared_ptr<BlockWork> w) {
        plan.block_start[w->number] = plan.total_values;
        plan.total_values += w->rows;
      });
  return plan;
}

PipelineResult run_pipeline(PairReader& reader, const Tokenizer& tokenizer, const Transformer& encoder,
                            const PipelineSettings& s, const BlockDone& done, const AttentionSink& sink,
                            const BlockCommit& commit, const std::atomic<bool>& stop, PipelineProgress& progress) {
  BlockReader blocks(reader, s, done);
  PipelineResult result;
  const std::size_t vs = attention_value_size(s.layout.dtype);

  auto read_block = [&](tbb::flow_control& fc) -> std::shared_ptr<BlockWork> {
    if (stop.load()) {
      fc.stop();
      return nullptr;
    }
    auto w = blocks.next();
    if (!w) {
      result.reached_end = true;
      fc.stop();
    }
    return w;
  };

  auto process_block = [&](std::shared_ptr<BlockWork> work) -> std::shared_ptr<BlockWork> {
    const std::vector<Encoding> encodings = tokenize_block(*work, tokenizer, s.max_length);
    const std::vector<uint64_t> sizes = attention_sizes(*work, encodings, s);
    // Each stored example's place in the block's attention, known before the forward.
    std::vector<std::size_t> lengths;
    std::vector<int64_t> offset(encodings.size(), -1);
    uint64_t values = 0;
    for (std::size_t i = 0; i < encodings.size(); ++i) {
      lengths.push_back(encodings[i].size());
      if (sizes[i] > 0) {
        offset[i] = static_cast<int64_t>(values);
        values += sizes[i];
      }
    }
    // Detector scores, per output, for the block's examples in input order.
    const auto layers = static_cast<std::size_t>(encoder.config().num_layers);
    const auto lh = layers * static_cast<std::size_t>(encoder.config().num_heads);
    std::vector<const Row*> record_rows;
    for (const auto& row : work->items)
      if (row.record) record_rows.push_back(&row);
    if (s.detectors)
      for (const auto& d : s.detectors->detectors())
        for (const auto& o : d.info.outputs)
          work->chunk.scores[d.info.name + "/" + o] = {std::vector<float>(encodings.size() * lh),
                                                       std::vector<float>(encodings.size() * layers)};
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const auto& so : importance_outputs(s.importance))  // NaN for the rows importance skips
      work->chunk.scores[so.key()] = {std::vector<float>(encodings.size() * lh, nan),
                                      std::vector<float>(encodings.size() * layers, nan)};
    const std::vector<int64_t> classes = record_classes(record_rows, s.importance);
    const bool scoring = s.detectors && !s.detectors->detectors().empty();
    std::vector<std::vector<float>> value_norms(encodings.size());  // stored ones
    std::map<std::string, std::vector<std::vector<float>>> layer_maps;
    for (const auto& name : s.layout.layer_maps) layer_maps[name].resize(encodings.size());
    // The block's batches are tasks of the run's arena: a compute stream with no block of its own
    // (the last block of a run, or of a small one) takes batches of another. Each batch writes only
    // its own examples' places, so the outcome does not depend on which stream ran it.
    const auto batches = bucket_batches(lengths, s.batch_tokens, kBatchAttentionValues, lh);
    tbb::parallel_for(std::size_t(0), batches.size(), [&](std::size_t bi) {
      const auto& members = batches[bi];
      std::vector<const Encoding*> batch;
      for (auto m : members) batch.push_back(&encodings[m]);
      const TokenBatch tokens = TokenBatch::from_encodings(batch, tokenizer.pad_id());
      auto out = encoder.forward(tokens, ForwardOutputs{/*hidden_states=*/false, s.value_norms, /*compact_attention=*/true});
      const BatchMixing mixing = batch_mixing(encoder, tokens, s.mixing);
      if (scoring || s.layout.value_norms || !layer_maps.empty()) {
        // Copied out only for what reads n x n blocks: detectors in this process, the rollout.
        const bool contiguous = (scoring && s.detectors->scores_in_process()) || layer_maps.count("rollout") > 0;
        std::vector<UnpaddedMaps> maps;
        for (std::size_t k = 0; k < members.size(); ++k)
          maps.push_back(unpadded_maps(out, static_cast<int64_t>(k), encodings[members[k]].size(), contiguous));
        if (scoring)
          score_batch(*s.detectors, members, encodings, tokenizer.pair_template(), record_rows, out, maps, mixing,
                      work->chunk);
        for (std::size_t k = 0; k < members.size(); ++k) {
          const std::size_t n = encodings[members[k]].size();
          if (s.layout.value_norms) value_norms[members[k]] = token_major(maps[k].value_norms, out.layers * out.heads, n);
          for (auto& [name, per_example] : layer_maps)
            per_example[members[k]] = stored_layer_map(name, maps[k], mixing, k, out.layers, out.heads, n);
        }
      }
      if (s.importance.enabled())
        importance_batch(encoder, s.importance, members, encodings, record_rows, classes, tokenizer.pad_id(), work->chunk);
      progress.batches += 1;
      std::vector<uint8_t, UninitializedAllocator<uint8_t>> buffer;  // one example's stored attention at a time
      uint64_t most = 0;
      for (const auto m : members) most = std::max(most, sizes[m]);
      buffer.reserve(most * vs);
      for (std::size_t k = 0; k < members.size(); ++k) {
        const auto m = members[k];
        if (offset[m] < 0) continue;
        buffer.resize(sizes[m] * vs);  // not zeroed: write_attention writes every byte
        write_attention(buffer.data(), out, static_cast<int64_t>(k), static_cast<int64_t>(encodings[m].size()), s.layout);
        sink(work->number, static_cast<uint64_t>(offset[m]), buffer.data(), buffer.size());
      }
    });
    // Metadata in input order; rejected rows keep their place in /rejects.
    std::size_t e = 0;
    for (const auto& row : work->items) {
      if (row.record) {
        append_example(work->chunk, row.index, *row.record, encodings[e], offset[e]);
        auto& c = work->chunk;
        c.value_norms.insert(c.value_norms.end(), value_norms[e].begin(), value_norms[e].end());
        for (const auto& [name, per_example] : layer_maps)
          c.layer_maps[name].insert(c.layer_maps[name].end(), per_example[e].begin(), per_example[e].end());
        ++e;
      } else {
        append_reject(work->chunk, row.index, *row.reject);
      }
    }
    work->items.clear();
    return work;
  };

  // One block may wait for the commit thread beside the one it commits; a stream hands its block over
  // and goes on, unless both are taken.
  CommitThread commits(1);
  auto commit_block = [&](std::shared_ptr<BlockWork> work) {
    commits.hand_over([&commit, &progress, work = std::move(work)] {
      const auto& e = work->chunk.examples;
      uint64_t tokens = 0;
      for (auto n : e.n_tokens) tokens += n;
      const uint64_t examples = e.size();
      commit(work->number, work->rows, std::move(work->chunk));
      progress.examples += examples;
      progress.tokens += tokens;
      progress.blocks += 1;
      progress.fraction = work->fraction;
    });
  };

  run_blocks(s.inflight, read_block, process_block, commit_block);
  commits.drain();
  result.rows_total = blocks.rows_total();
  if (stop.load()) result.reached_end = false;
  return result;
}

}  // namespace attnscan
