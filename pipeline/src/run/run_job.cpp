#include "run/run_job.hpp"

#include <malloc.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "encoder/encoder.hpp"
#include "model/model_location.hpp"
#include "model/model_weights.hpp"
#include "encoder/platform.hpp"
#include "plugin_host/plugin_host.hpp"
#include "tokenizer/tokenizer.hpp"
#include "run/memory_limit.hpp"
#include "run/pipeline.hpp"
#include "run/progress.hpp"
#include "common/remembered_digest.hpp"
#include "common/sha256.hpp"
#include "store/byte_count.hpp"
#include "store/h5_file.hpp"
#include "store/output_session.hpp"
#include "model/model_tokenizer.hpp"

namespace attnscan {

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> dataset_files(const DatasetSpec& d) {
  if (d.format == DatasetFormat::Parallel) {
    std::vector<fs::path> v = {d.s1, d.s2};
    if (!d.labels.empty()) v.push_back(d.labels);
    return v;
  }
  return {d.path};
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Loads one `detectors:` entry; parameter errors point at the YAML line that wrote the parameter.
LoadedDetector load_configured(const PluginHost& host, const DetectorConfig& d) {
  try {
    return host.load(d.name, d.params);
  } catch (const PluginParamError& e) {
    auto it = d.param_where.find(e.param());
    throw ConfigError((it != d.param_where.end() ? it->second : d.where) + ": " + e.what());
  } catch (const PluginError& e) {
    if (d.where.empty()) throw;
    throw PluginError(d.where + ": " + e.what());
  }
}

// What makes this run's output what it is: configuration, model, dataset, detector builds.
RootInfo describe_run(const RunRequest& req, const fs::path& model_dir, const LoadedModel& model) {
  RootInfo root;
  root.config_yaml = req.config_yaml;
  root.model_dir = fs::absolute(model_dir).string();
  root.model_config_json = read_text(model.files.config_json);
  root.block_rows = req.config.block_rows;
  root.shard_index = req.shard_index;
  root.shard_count = req.shard_count;
  root.identity.config_identity = req.config_identity;
  root.identity.model_sha256 = remembered_sha256_file(model.files.weights);
  std::string dataset_hashes;
  for (const auto& f : dataset_files(req.config.dataset)) {
    root.dataset += (root.dataset.empty() ? "" : ", ") + fs::absolute(f).string();
    dataset_hashes += remembered_sha256_file(f);
  }
  root.identity.dataset_sha256 = sha256_text(dataset_hashes);
  return root;
}

LayoutParams output_layout(const RunConfig& cfg, const ModelConfig& model) {
  LayoutParams layout;
  layout.dtype = cfg.attention_dtype;
  layout.compression = cfg.compression;
  layout.model_layers = model.num_layers;
  layout.model_heads = model.num_heads;
  layout.value_norms = cfg.value_norms;
  layout.layer_maps = cfg.layer_maps;
  layout.trees = cfg.dataset.format == DatasetFormat::Conllu;  // every record carries its trees
  try {
    layout.layers = parse_index_list(cfg.layers, model.num_layers);
    layout.heads = parse_index_list(cfg.heads, model.num_heads);
  } catch (const Error& e) {
    throw ConfigError(std::string("output.layers/output.heads: ") + e.what());
  }
  bool every_key = true;
  for (int64_t l = 0; l < model.num_layers; ++l) every_key &= model.key_range(l).is_all();
  if (!every_key)
    for (int64_t l : layout.layers) layout.key_ranges.push_back(model.key_range(l).before), layout.key_ranges.push_back(model.key_range(l).after);
  return layout;
}

// Detector plugins, loaded (parameters checked) before anything is written; their outputs join the
// layout and their builds the identity (a resume or merge refuses another build).
std::vector<LoadedDetector> load_detectors(const RunConfig& cfg, LayoutParams& layout, RunIdentity& identity) {
  std::vector<LoadedDetector> detectors;
  if (cfg.detectors.empty()) return detectors;
  PluginHost host(std::vector<fs::path>(cfg.plugin_paths.begin(), cfg.plugin_paths.end()));
  for (const auto& d : cfg.detectors) {
    detectors.push_back(load_configured(host, d));
    detectors.back().map = parse_attention_map(d.map);
    const std::string plugin = detectors.back().info.name;
    detectors.back().info.name = d.effective_name();  // scores, errors and identity use the name it is stored under
    const auto& info = detectors.back().info;
    identity.detector_builds += info.name + " " + info.version + " " + sha256_file(detectors.back().file) + "\n";
    std::string params;
    for (const auto& [k, v] : detectors.back().params) params += (params.empty() ? "" : ", ") + k + "=" + param_value_text(v);
    for (const auto& o : info.outputs)
      layout.scores.push_back(
          {info.name, o, info.version, info.description, params, plugin == info.name ? "" : plugin, d.map});
  }
  return detectors;
}

// importance.*: the task head (loaded and checked before anything is written) and the mask token.
ImportanceSettings importance_settings(const RunConfig& cfg, const Tokenizer& tokenizer, const TaskHead* head) {
  ImportanceSettings s;
  s.ablation = cfg.importance_ablation;
  s.head = head;
  s.every = cfg.importance_every;
  s.mlm_every = cfg.mlm_every;
  const auto& d = cfg.dataset;
  s.label_file = (d.format == DatasetFormat::Parallel ? d.labels : d.path).string();
  if (head && head->objective == HeadObjective::Mlm) {
    const std::string& mask = tokenizer.config().mask_token;
    s.mask_id = tokenizer.vocab().find(mask);
    if (s.mask_id < 0)
      throw ModelError("importance.gradient mlm: the tokenizer (" + tokenizer.source() + ") has no mask token '" + mask + "'");
  }
  return s;
}

PipelineSettings pipeline_settings(const RunRequest& req, const LayoutParams& layout, const DetectorRunner& detectors,
                                   int inflight) {
  const RunConfig& cfg = req.config;
  PipelineSettings ps;
  ps.block_rows = cfg.block_rows;
  ps.inflight = inflight;
  ps.batch_tokens = cfg.batch_tokens;
  ps.max_length = cfg.max_length;
  ps.attention_every = cfg.attention_every;
  ps.max_rows = cfg.max_rows;
  ps.shard_index = req.shard_index;
  ps.shard_count = req.shard_count;
  ps.layout = layout;
  ps.detectors = &detectors;
  ps.value_norms = layout.value_norms;
  for (const auto& d : detectors.detectors()) ps.value_norms |= d.map == AttentionMap::Norm;
  ps.mixing.value_zeroing = layout.stores("value_zeroing");
  ps.mixing.alti = layout.stores("alti");
  for (const auto& d : detectors.detectors()) {
    ps.mixing.value_zeroing |= d.map == AttentionMap::ValueZeroing;
    ps.mixing.alti |= d.map == AttentionMap::Alti || d.map == AttentionMap::AltiRollout;
  }
  return ps;
}

bool holds_pairs(const DatasetSpec& d) {
  if (d.format == DatasetFormat::Parallel) return !d.s2.empty();
  if (d.format == DatasetFormat::Conllu) return d.pairing == ConlluPairing::Consecutive;
  return d.sentence_b.set();
}

// engine.max_length against what the model takes and what the template's specials leave: refused at
// the start instead of at the first long pair's forward, or of storing every pair as its specials alone.
void check_max_length(const RunConfig& cfg, const ModelConfig& model, const Tokenizer& tokenizer) {
  if (cfg.max_length == 0) return;  // the model's maximum
  const auto most = static_cast<std::size_t>(model.max_tokens());
  if (cfg.max_length > most)
    throw ConfigError("engine.max_length " + std::to_string(cfg.max_length) + " exceeds the model's maximum of " +
                      std::to_string(most) + " tokens (its max_position_embeddings): set at most " + std::to_string(most) +
                      ", or 0 for the maximum");
  const bool pairs = holds_pairs(cfg.dataset);
  // A joined pair is cut from its end (B first), so one token of A is the least it keeps.
  const bool each_sentence = pairs && tokenizer.pair_encoding() == PairEncoding::Template;
  const std::size_t specials = tokenizer.specials_added(pairs), least = specials + (each_sentence ? 2 : 1);
  if (cfg.max_length < least)
    throw ConfigError("engine.max_length " + std::to_string(cfg.max_length) + " leaves no room for text: the " +
                      std::to_string(specials) + " special tokens of " + (pairs ? "a pair" : "a sentence") +
                      " take it all. Set at least " + std::to_string(least) +
                      (each_sentence ? " (one token of each sentence)" : pairs ? " (one token of A)" : " (one token of the sentence)") +
                      ", or 0 for the model's maximum");
}

// The model's tokenizer; where its family joins pairs into one text, with dataset.pair_separator between them.
Tokenizer run_tokenizer(const fs::path& model_dir, const ModelConfig& model, const RunConfig& cfg) {
  Tokenizer tokenizer = load_tokenizer(model_dir, model, cfg.tokenizer_file);
  try {
    tokenizer.set_pair_separator(cfg.pair_separator);
  } catch (const Error& e) {
    throw ConfigError(std::string("dataset.pair_separator: ") + e.what());
  }
  return tokenizer;
}

// The dataset's sha256 is part of what a resume must match, and so is dataset.on_bad_row: neither a
// fixed row nor skipping it can reuse the committed blocks.
std::string bad_row_next_step(const BadRowError& e) {
  return std::string("A resume needs the same dataset and settings, so the committed blocks cannot be reused: fix the "
                     "row and rerun with --overwrite (it starts over)") +
         (e.skippable ? ", or rerun with --overwrite --set dataset.on_bad_row=skip to skip and count such rows" : "") +
         ".";
}

}  // namespace

int run_job(const RunRequest& req, const std::atomic<bool>& stop, std::ostream& log) {
  const RunConfig& cfg = req.config;
  const auto t0 = std::chrono::steady_clock::now();
  require_precision(cfg.engine.precision, "engine.precision");  // before the lock and the model
  OutputSession output(cfg.output_path, "attnscan run");  // the lock, at once

  const fs::path model_dir = cfg.model.empty() ? default_model_dir() : fs::path(cfg.model);
  const LoadedModel model = load_model(model_dir);
  const Tokenizer tokenizer = run_tokenizer(model_dir, model.config, cfg);
  check_max_length(cfg, model.config, tokenizer);
  RootInfo root = describe_run(req, model_dir, model);
  root.identity.config_identity += "model family: " + describe(model.config) + "\n";
  root.identity.config_identity += "tokenizer file: " + tokenizer.source() + "\n";
  root.tokenizer = tokenizer.source();
  root.subword_kind = to_string(tokenizer.kind());
  LayoutParams layout = output_layout(cfg, model.config);
  const std::vector<LoadedDetector> detectors = load_detectors(cfg, layout, root.identity);
  std::optional<TaskHead> head;
  if (auto objective = head_objective_named(cfg.importance_gradient)) head = load_task_head(model, *objective);
  const ImportanceSettings importance = importance_settings(cfg, tokenizer, head ? &*head : nullptr);
  for (auto& so : importance_outputs(importance)) layout.scores.push_back(std::move(so));
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = cfg.engine.threads > 0 ? cfg.engine.threads : cores;
  const int inflight = cfg.inflight > 0 ? cfg.inflight : (threads >= 2 ? 2 : 1);
  const int stream_threads = std::max(1, threads / inflight);  // never more compute threads than cores in total
  // Sized before the fork below, which stops OpenBLAS's pool; resizing it later would restart it.
  set_compute_threads(stream_threads);
  // Detector worker processes start here: before the encoder's threads and before the output is opened.
  DetectorRunOptions dro;
  dro.isolation = detector_isolation_named(cfg.detector_isolation);
  dro.workers = inflight;
  dro.timeout_s = cfg.detector_timeout_s;
  dro.stop = &stop;
  const DetectorRunner runner(detectors, dro);
  PipelineSettings ps = pipeline_settings(req, layout, runner, inflight);
  if (ps.mixing.alti && (model.config.pre_norm || model.config.described_by_layers()))  // its decomposition is that of a LayerNorm after the residual
    throw Error("output.alti (or a detector's map: alti/alti_rollout): ALTI decomposes layers that normalise after "
                "the attention's residual; model_type '" + model.config.model_type +
                "' normalises before it (pre-norm), which ALTI does not cover; output.value_zeroing works on it");
  ps.importance = importance;
  EncoderOptions eo = cfg.engine;
  eo.threads = stream_threads;
  eo.load_threads = threads;
  root.compute_platform = compute_platform().describe() + "HDF5: " + h5::library_version() + "\n";
  root.numerics = compute_platform().numerics() + ", linear layers " + linear_backend_name(resolve_linear_backend(eo)) +
                  ", " + std::to_string(eo.threads) + " intra-op thread(s)";
  if (!output.begin(root, layout, req.overwrite, log)) return kRunOk;  // already complete
  log << "model: " << describe(model.config) << "; tokenizer: " << tokenizer.source() << "\n";
  if (holds_pairs(cfg.dataset) && tokenizer.pair_encoding() == PairEncoding::Joined)
    log << "tokenizer: each pair is joined as one text, A + " << nlohmann::json(tokenizer.pair_separator()).dump()
        << " + B (dataset.pair_separator); each token keeps its sentence (docs/models.md, \"Decoders\")\n";
  if (model.config.has_local_layers())
    log << "model: layers l with l % " << model.config.global_every << " != 0 attend within a window of +-"
        << model.config.local_window / 2 << " tokens; their detector baselines are uniform over the keys a query "
        << "sees (docs/patterns.md, \"Sliding-window layers\")\n";
  if (auto unused = unused_tensors_line(*model.weights); !unused.empty()) log << "model: " << unused << "\n";
  if (importance.enabled())
    log << "importance: " << (importance.ablation ? "ablation" : "") << (importance.ablation && head ? " and " : "")
        << (head ? "gradient of the " + head->description : "") << ", rows whose index is a multiple of "
        << importance.every << "\n";
  const Transformer encoder(model, eo, head ? &*head : nullptr);
  // Under an address-space limit: refuse a run that cannot fit before it starts (each block in flight
  // needs an OpenBLAS buffer per compute thread and a batch's attention, for pairs of 64 tokens at least).
  const std::string memory_advice = memory_settings_advice(cfg.batch_tokens, threads, ps.inflight);
  const uint64_t batch_attention = static_cast<uint64_t>(cfg.batch_tokens) * 64 * 2 * sizeof(float) *
                                   static_cast<uint64_t>(model.config.num_layers * model.config.num_heads);
  try {
    require_address_space(static_cast<uint64_t>(ps.inflight) * (kBlasBufferBytes * static_cast<uint64_t>(eo.threads) +
                                                                batch_attention),
                          memory_advice);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "\n" + output.failure_note());
  }

  PipelineProgress progress;
  PipelineResult result;
  try {
    // ... and end one that runs into the limit anyway instead of leaving it spinning.
    const AddressSpaceWatch watch(progress.batches, memory_advice + "; committed blocks in " + output.parts().string() +
                                                        " are kept: rerun the same command to resume", log);
    // Uncompressed attention is sized by a tokenizing pre-pass and written once, into its final place.
    if (layout.compression == Compression::None && cfg.attention_every > 0) {
      output.plan_attention(plan_attention(*open_dataset(cfg.dataset), tokenizer, ps), log);
    } else {  // compressed attention spills per block; a scores-only run stores none
      AttentionPlan spilled;
      spilled.exact = cfg.attention_every == 0;
      output.plan_attention(spilled, log);
    }
    auto reader = open_dataset(cfg.dataset);
    auto sink = [&](uint64_t block, uint64_t offset, const uint8_t* data, std::size_t bytes) {
      output.write_attention(block, offset, data, bytes);
    };
    auto commit = [&](uint64_t block, uint64_t rows, LayoutChunk&& chunk) {
      output.commit(block, rows, std::move(chunk));
      // Freed heap pages are kept for speed within a block (see encoder.cpp); hand them back between
      // blocks so the footprint tracks what is live, not the largest batch ever seen.
      malloc_trim(0);
    };
    const std::set<uint64_t> done = output.committed();
    std::unique_ptr<ProgressReporter> reporter;
    if (req.progress) reporter = std::make_unique<ProgressReporter>(progress, log);
    result = run_pipeline(*reader, tokenizer, encoder, ps, [&](uint64_t b) { return done.count(b) > 0; }, sink, commit,
                          stop, progress);
  } catch (const DetectorsStopped& e) {  // a stop request ended a running detector: an interruption
    log << e.what() << "\n";
    result.reached_end = false;
  } catch (const BadRowError& e) {
    throw Error(std::string(e.what()) + "\n" + output.failure_note(bad_row_next_step(e)));
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "\n" + output.failure_note());
  } catch (const std::exception& e) {  // an allocation that failed (std::bad_alloc, LibTorch's allocator)
    const std::string what = e.what();
    if (!dynamic_cast<const std::bad_alloc*>(&e) && what.find("can't allocate memory") == std::string::npos) throw;
    throw Error("out of memory (" + what.substr(0, what.find('\n')) + "): " + memory_advice + "\n" + output.failure_note());
  }
  output.drop_in_flight();  // blocks in flight when stopped: redone on resume
  if (!result.reached_end) {
    log << "interrupted: " << progress.blocks.load() << " new block(s) committed (" << output.committed().size()
        << " in all) in " << output.parts().string() << ". Rerun the same command to resume.\n";
    return kRunInterrupted;
  }

  if (result.rows_total == 0) {  // an output of nothing would read as a finished run
    const fs::path data = cfg.dataset.format == DatasetFormat::Parallel ? cfg.dataset.s1 : cfg.dataset.path;
    throw Error(data.string() + ": no rows to read (the file is empty, or holds only its header)\n" + output.failure_note());
  }
  const auto t_finish = std::chrono::steady_clock::now();
  const FinishedOutput done = output.finish(result.rows_total, log);
  const auto now = std::chrono::steady_clock::now();
  const double secs = std::chrono::duration<double>(now - t0).count();
  const double finish_secs = std::chrono::duration<double>(now - t_finish).count();
  const RootInfo& r = done.root;
  log << "done: " << output.path().string() << "\n"
      << "  pairs written " << r.examples_written << ", rows read " << r.rows_read << ", skipped " << r.rows_skipped
      << ", truncated " << r.examples_truncated << "\n"
      << "  this invocation: " << progress.examples.load() << " pairs in " << secs << " s ("
      << static_cast<double>(progress.examples.load()) / secs << " pairs/s, "
      << static_cast<double>(progress.tokens.load()) / secs << " tokens/s)\n"
      << "  attention values " << done.attention_values << ", file " << human_bytes(fs::file_size(output.path()))
      << " (finished in " << finish_secs << " s)\n";
  return kRunOk;
}

}  // namespace attnscan
