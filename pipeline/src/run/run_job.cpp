#include "run/run_job.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "attnscan/encoder.hpp"
#include "attnscan/model_location.hpp"
#include "attnscan/model_weights.hpp"
#include "attnscan/plugin_host.hpp"
#include "attnscan/tokenizer.hpp"
#include "run/parts_folder.hpp"
#include "run/pipeline.hpp"
#include "run/progress.hpp"
#include "run/sha256.hpp"
#include "store/durable.hpp"
#include "store/output_file.hpp"
#include "store/output_lock.hpp"
#include "store/score_stats.hpp"

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

std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", double(b) / double(1ull << 30));
  else std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / double(1ull << 20));
  return buf;
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

// Refuses to start when the attention the pre-pass sized cannot fit in the output's folder.
void check_free_space(const fs::path& file, uint64_t bytes) {
  const fs::path dir = fs::absolute(file).parent_path();
  std::error_code ec;
  const auto space = fs::space(dir, ec);
  if (ec || bytes <= space.available) return;
  throw Error("the attention of this run needs " + human_bytes(bytes) + " in " + dir.string() + ", " +
              human_bytes(space.available) + " free. Free space, or store less: output.attention_every, output.dtype: "
              "uint8, output.layers/heads, output.compression: lz4");
}

// What a failed run leaves behind, and how to go on. Nothing committed: nothing worth keeping.
std::string leftovers_after_failure(const fs::path& out, uint64_t committed_blocks) {
  const fs::path parts = parts_dir(out), tmp = fs::path(out.string() + ".tmp");
  if (committed_blocks == 0) {
    std::error_code ec;
    fs::remove_all(parts, ec);
    fs::remove(tmp, ec);
    return "nothing was committed; no partial output is left behind.";
  }
  std::string kept = parts.string() + " (" + std::to_string(committed_blocks) + " committed block(s))";
  if (fs::exists(tmp)) kept += " and " + tmp.string();
  return "kept: " + kept + ". Fix the cause and rerun the same command: it resumes from the committed blocks " +
         "(--overwrite starts over).";
}

}  // namespace

int run_job(const RunRequest& req, const std::atomic<bool>& stop, std::ostream& log) {
  const RunConfig& cfg = req.config;
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path out = cfg.output_path;
  const OutputLock lock(out, "attnscan run");
  const fs::path model_dir = cfg.model.empty() ? default_model_dir() : fs::path(cfg.model);
  LoadedModel model = load_model(model_dir);
  auto tokenizer = WordPieceTokenizer::from_model_dir(model_dir, model.config);

  RootInfo root;
  root.config_yaml = req.config_yaml;
  root.model_dir = fs::absolute(model_dir).string();
  root.model_config_json = read_text(model.files.config_json);
  root.block_rows = cfg.block_rows;
  root.shard_index = req.shard_index;
  root.shard_count = req.shard_count;
  root.identity.config_identity = req.config_identity;
  root.identity.model_sha256 = sha256_file(model.files.weights);
  std::string dataset_hashes;
  for (const auto& f : dataset_files(cfg.dataset)) {
    root.dataset += (root.dataset.empty() ? "" : ", ") + fs::absolute(f).string();
    dataset_hashes += sha256_file(f);
  }
  root.identity.dataset_sha256 = sha256_text(dataset_hashes);

  LayoutParams layout;
  layout.dtype = cfg.attention_dtype;
  layout.compression = cfg.compression;
  layout.model_layers = model.config.num_layers;
  layout.model_heads = model.config.num_heads;
  try {
    layout.layers = parse_index_list(cfg.layers, model.config.num_layers);
    layout.heads = parse_index_list(cfg.heads, model.config.num_heads);
  } catch (const Error& e) {
    throw ConfigError(std::string("output.layers/output.heads: ") + e.what());
  }

  // Detector plugins: loaded (and their parameters checked) before anything is written.
  std::vector<LoadedDetector> detectors;
  {
    PluginHost host(std::vector<fs::path>(cfg.plugin_paths.begin(), cfg.plugin_paths.end()));
    for (const auto& d : cfg.detectors) {
      detectors.push_back(load_configured(host, d));
      const auto& info = detectors.back().info;
      root.identity.detector_builds +=
          info.name + " " + info.version + " " + sha256_file(detectors.back().file) + "\n";  // resume/merge refuse other builds
      std::string params;
      for (const auto& [k, v] : detectors.back().params) params += (params.empty() ? "" : ", ") + k + "=" + param_value_text(v);
      for (const auto& o : info.outputs) layout.scores.push_back({info.name, o, info.version, info.description, params});
    }
  }

  // A complete output from the same run means there is nothing left to do.
  if (fs::exists(out) && !req.overwrite) {
    RootInfo existing;
    try {
      existing = read_root(LayoutReader(out).file());
    } catch (const Error& e) {
      throw Error(out.string() + " exists and is not a readable attnscan output; remove it or pass --overwrite (" + e.what() + ")");
    }
    std::string diff = existing.identity.difference(root.identity);
    if (diff.empty() && existing.shard_index == req.shard_index && existing.shard_count == req.shard_count) {
      log << out.string() << " is already complete (" << existing.examples_written << " examples); nothing to do\n";
      return kRunOk;
    }
    throw Error(out.string() + " exists from a different run (" + (diff.empty() ? "another shard" : diff) +
                "); remove it or pass --overwrite");
  }

  const fs::path parts = parts_dir(out);
  if (fs::exists(parts) && req.overwrite) fs::remove_all(parts);
  std::set<uint64_t> done;
  if (fs::exists(parts)) {
    std::string shard;
    RunIdentity previous = read_identity(parts, shard);
    std::string diff = previous.difference(root.identity);
    const std::string my_shard = std::to_string(req.shard_index) + "/" + std::to_string(req.shard_count);
    if (shard != my_shard) diff += (diff.empty() ? "" : "; ") + std::string("the shard changed (" + shard + " -> " + my_shard + ")");
    if (!diff.empty())
      throw Error("refusing to resume into " + parts.string() + ": " + diff +
                  ". Rerun with the original settings, or pass --overwrite to start over");
    done = committed_blocks(parts);
    log << "resuming: " << done.size() << " block(s) already committed in " << parts.string() << "\n";
  } else {
    if (out.has_parent_path()) fs::create_directories(out.parent_path());
    fs::create_directories(parts);
    write_identity(parts, root.identity, req.shard_index, req.shard_count);
  }
  if (auto unused = unused_tensors_line(*model.weights); !unused.empty()) log << "model: " << unused << "\n";

  PipelineSettings ps;
  ps.block_rows = cfg.block_rows;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = cfg.engine.threads > 0 ? cfg.engine.threads : cores;
  ps.inflight = cfg.inflight > 0 ? cfg.inflight : (threads >= 2 ? 2 : 1);
  ps.batch_tokens = cfg.batch_tokens;
  ps.max_length = cfg.max_length;
  ps.attention_every = cfg.attention_every;
  ps.max_rows = cfg.max_rows;
  ps.shard_index = req.shard_index;
  ps.shard_count = req.shard_count;
  ps.layout = layout;
  ps.detectors = &detectors;
  EncoderOptions eo = cfg.engine;
  eo.threads = std::max(1, threads / ps.inflight);  // never more compute threads than cores in total
  BertEncoder encoder(model, eo);

  // Uncompressed attention is written once, straight into its final place: a tokenizing pre-pass
  // sizes it, OUT.tmp is created with the attention dataset allocated, and each block's bytes are
  // written there raw before its (metadata-only) part commits. Compressed attention stays in the
  // parts and is copied once at the end.
  const fs::path tmp_out = fs::path(out.string() + ".tmp");
  const std::size_t vs = attention_value_size(layout.dtype);
  AttentionPlan plan;
  if (layout.compression == Compression::None && cfg.attention_every > 0) {
    auto pre = open_dataset(cfg.dataset);
    plan = plan_attention(*pre, tokenizer, ps);
  }
  // Scores-only runs (or inputs without a stored pair) have no attention to write raw.
  const bool direct = plan.total_values > 0;
  uint64_t attention_at = 0;  // byte offset of attention/values in OUT.tmp
  int fd = -1;
  if (direct) {
    const fs::path note = parts / "attention.txt";
    uint64_t noted_total = 0;
    bool reuse = false;
    if (fs::exists(note) && fs::exists(tmp_out)) {
      std::ifstream in(note);
      reuse = static_cast<bool>(in >> noted_total >> attention_at) && noted_total == plan.total_values;
    }
    if (!reuse) try {
      check_free_space(tmp_out, plan.total_values * vs);
      if (!done.empty()) log << "note: " << tmp_out.string() << " missing or stale: redoing all blocks\n";
      for (uint64_t b : done) fs::remove(parts / block_name(b));
      done.clear();
      {
        LayoutWriter w(tmp_out, layout, static_cast<int64_t>(plan.total_values), /*external_attention=*/true);
        attention_at = w.attention_file_offset();
        w.file().flush();
      }
      fsync_path(tmp_out);
      {
        std::ofstream o(note.string() + ".tmp");
        o << plan.total_values << " " << attention_at << "\n";
      }
      durable_rename(note.string() + ".tmp", note);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + "\n" + leftovers_after_failure(out, done.size()));
    }
    fd = ::open(tmp_out.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw Error(tmp_out.string() + ": cannot open for writing attention");
  }
  struct FdCloser {
    int& fd;
    ~FdCloser() {
      if (fd >= 0) ::close(fd);
    }
  } closer{fd};

  // Compressed attention waits in a raw spill file per block until the block commits.
  std::mutex spill_mutex;
  std::map<uint64_t, int> spills;
  auto spill_path = [&](uint64_t block) { return parts / (block_name(block) + ".spill"); };
  AttentionSink sink = [&](uint64_t block, uint64_t offset, const uint8_t* data, std::size_t bytes) {
    if (direct) {
      write_all_at(fd, data, bytes, attention_at + (plan.block_start.at(block) + offset) * vs, tmp_out);
      return;
    }
    int spill;
    {
      std::lock_guard<std::mutex> lock(spill_mutex);
      auto it = spills.find(block);
      if (it == spills.end()) {
        int f = ::open(spill_path(block).c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (f < 0) throw Error(spill_path(block).string() + ": cannot create");
        it = spills.emplace(block, f).first;
      }
      spill = it->second;
    }
    write_all_at(spill, data, bytes, offset * vs, spill_path(block));
  };

  auto reader = open_dataset(cfg.dataset);
  PipelineProgress progress;
  auto commit = [&](uint64_t block, uint64_t rows, LayoutChunk&& chunk) {
    if (direct) {
      if (::fdatasync(fd) != 0) throw Error(tmp_out.string() + ": fdatasync failed");
      const uint64_t start = plan.block_start.at(block);
      for (auto& o : chunk.examples.attention_offset)
        if (o >= 0) o += static_cast<int64_t>(start);
    }
    int spill = -1;
    if (!direct) {
      std::lock_guard<std::mutex> lock(spill_mutex);
      if (auto it = spills.find(block); it != spills.end()) {
        spill = it->second;
        spills.erase(it);
      }
    }
    const fs::path final_path = parts / block_name(block), tmp = fs::path(final_path.string() + ".tmp");
    {
      LayoutWriter w(tmp, layout);
      w.append(chunk);
      if (spill >= 0) {  // the block's attention, in pieces of bounded size
        std::vector<uint8_t> buf(16u << 20);
        for (off_t at = 0;;) {
          ssize_t r = ::pread(spill, buf.data(), buf.size(), at);
          if (r < 0) throw Error(spill_path(block).string() + ": read failed");
          if (r == 0) break;
          w.file().append_raw("attention/values", buf.data(), static_cast<std::size_t>(r) / vs);
          at += r;
        }
        ::close(spill);
        fs::remove(spill_path(block));
      }
      auto& f = w.file();
      f.set_attr("/", "format", std::string(kFormatName));
      f.set_attr("/", "format_version", kFormatVersion);
      f.set_attr("/", "block", static_cast<int64_t>(block));
      f.set_attr("/", "block_rows_seen", static_cast<int64_t>(rows));
      f.set_attr("/", kExternalAttentionAttr, static_cast<int64_t>(direct ? 1 : 0));
      f.flush();
    }
    durable_rename(tmp, final_path);
    // Freed heap pages are kept for speed within a block (see encoder.cpp); hand them back between
    // blocks so the footprint tracks what is live, not the largest batch ever seen.
    malloc_trim(0);
  };
  PipelineResult result;
  {
    std::unique_ptr<ProgressReporter> reporter;
    if (req.progress) reporter = std::make_unique<ProgressReporter>(progress, log);
    try {
      result = run_pipeline(*reader, tokenizer, encoder, ps, [&](uint64_t b) { return done.count(b) > 0; }, sink,
                            commit, stop, progress);
    } catch (const Error& e) {
      for (auto& [block, f] : spills) ::close(f);
      spills.clear();
      throw Error(std::string(e.what()) + "\n" + leftovers_after_failure(out, done.size() + progress.blocks.load()));
    }
  }
  for (auto& [block, f] : spills) ::close(f);  // blocks in flight when stopped: redone on resume
  if (!result.reached_end) {
    log << "interrupted: " << progress.blocks.load() << " new block(s) committed (" << (done.size() + progress.blocks.load())
        << " in all) in " << parts.string() << ". Rerun the same command to resume.\n";
    return kRunInterrupted;
  }

  // Every block of this shard, in order: counts, then the metadata (and compressed attention).
  const auto t_finish = std::chrono::steady_clock::now();
  const uint64_t blocks_total = (result.rows_total + cfg.block_rows - 1) / cfg.block_rows;
  std::vector<BlockSource> sources;
  int64_t attention_total = 0;
  for (uint64_t b = static_cast<uint64_t>(req.shard_index); b < blocks_total; b += static_cast<uint64_t>(req.shard_count)) {
    const fs::path p = parts / block_name(b);
    if (!fs::exists(p)) throw Error(p.string() + ": block missing after a complete pass; rerun to redo it");
    LayoutReader r(p);
    const auto& e = r.file();
    root.rows_read += static_cast<uint64_t>(e.attr_int("/", "block_rows_seen"));
    root.rows_skipped += r.rejects();
    root.examples_written += r.examples();
    for (auto t : e.read<uint8_t>("examples/truncated", 0, r.examples())) root.examples_truncated += t;
    sources.push_back({p, 0, r.examples(), 0, r.rejects()});
    attention_total += static_cast<int64_t>(e.length("attention/values"));
  }
  uint64_t attention_values = direct ? plan.total_values : static_cast<uint64_t>(attention_total);
  try {
    std::unique_ptr<LayoutWriter> writer;
    if (direct) {
      ::close(fd);
      fd = -1;
      writer = std::make_unique<LayoutWriter>(reopen_or_rebuild(tmp_out, layout, plan.total_values, attention_at, log));
    } else {
      writer = std::make_unique<LayoutWriter>(tmp_out, layout, attention_total);
    }
    copy_blocks(sources, *writer);
    write_score_aggregates(writer->file(), layout);
    write_root(writer->file(), root);
    writer->file().flush();
  } catch (const Error& e) {  // e.g. the disk filled up while assembling: every block stays committed
    throw Error(std::string(e.what()) + "\n" + leftovers_after_failure(out, sources.size()));
  }
  if (root.rows_skipped > 0) {
    const fs::path rejects = write_rejects_tsv(tmp_out, out);
    log << "  " << root.rows_skipped << " skipped row(s) listed in " << rejects.string() << "\n";
  }
  durable_rename(tmp_out, out);
  fs::remove_all(parts);

  const auto now = std::chrono::steady_clock::now();
  const double secs = std::chrono::duration<double>(now - t0).count();
  const double finish_secs = std::chrono::duration<double>(now - t_finish).count();
  const uint64_t bytes = fs::file_size(out);
  log << "done: " << out.string() << "\n"
      << "  pairs written " << root.examples_written << ", rows read " << root.rows_read << ", skipped " << root.rows_skipped
      << ", truncated " << root.examples_truncated << "\n"
      << "  this invocation: " << progress.examples.load() << " pairs in " << secs << " s ("
      << static_cast<double>(progress.examples.load()) / secs << " pairs/s, "
      << static_cast<double>(progress.tokens.load()) / secs << " tokens/s)\n"
      << "  attention values " << attention_values << ", file " << human_bytes(bytes) << " (finished in "
      << finish_secs << " s)\n";
  return kRunOk;
}

}  // namespace attnscan
