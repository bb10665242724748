#include "run/run_job.hpp"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "attnscan/encoder.hpp"
#include "attnscan/model_location.hpp"
#include "attnscan/model_weights.hpp"
#include "attnscan/tokenizer.hpp"
#include "run/pipeline.hpp"
#include "run/progress.hpp"
#include "run/sha256.hpp"
#include "store/durable.hpp"
#include "store/output_file.hpp"

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

fs::path parts_dir(const fs::path& out) { return fs::path(out.string() + ".parts"); }

std::string block_name(uint64_t block) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "block-%010" PRIu64 ".h5", block);
  return buf;
}

// Identity file of a parts folder: three lines "key: value" then the config identity.
void write_identity(const fs::path& dir, const RunIdentity& id, int shard_index, int shard_count) {
  auto tmp = dir / "identity.txt.tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << "model_sha256: " << id.model_sha256 << "\ndataset_sha256: " << id.dataset_sha256 << "\nshard: " << shard_index
        << "/" << shard_count << "\n" << id.config_identity;
  }
  durable_rename(tmp, dir / "identity.txt");
}

RunIdentity read_identity(const fs::path& dir, std::string& shard) {
  std::ifstream in(dir / "identity.txt", std::ios::binary);
  if (!in) throw Error((dir / "identity.txt").string() + ": missing; this parts folder was not written by attnscan run");
  RunIdentity id;
  std::string line;
  auto value = [&](const char* key) {
    std::getline(in, line);
    if (line.rfind(key, 0) != 0) throw Error((dir / "identity.txt").string() + ": corrupt (expected " + key + ")");
    return line.substr(std::string(key).size());
  };
  id.model_sha256 = value("model_sha256: ");
  id.dataset_sha256 = value("dataset_sha256: ");
  shard = value("shard: ");
  std::stringstream rest;
  rest << in.rdbuf();
  id.config_identity = rest.str();
  return id;
}

std::set<uint64_t> committed_blocks(const fs::path& dir) {
  std::set<uint64_t> done;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) {
      fs::remove(entry.path());  // an interrupted commit: redone
      continue;
    }
    uint64_t b = 0;
    if (std::sscanf(name.c_str(), "block-%" SCNu64 ".h5", &b) == 1 && name == block_name(b)) done.insert(b);
  }
  return done;
}

std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", double(b) / double(1ull << 30));
  else std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / double(1ull << 20));
  return buf;
}

}  // namespace

int run_job(const RunRequest& req, const std::atomic<bool>& stop, std::ostream& log) {
  const RunConfig& cfg = req.config;
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path out = cfg.output_path;
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
  if (!model.weights->ignored().empty())
    log << "note: " << model.weights->ignored().size() << " tensor(s) of the checkpoint are not used by the encoder\n";

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
  EncoderOptions eo = cfg.engine;
  eo.threads = std::max(1, threads / ps.inflight);  // never more compute threads than cores in total
  BertEncoder encoder(model, eo);

  // The output grows in OUT.tmp while blocks commit (no second pass over the data). It is not
  // crash-safe by itself, so a rerun rebuilds it from the committed parts, which always form a
  // prefix of this shard's blocks because commits happen in order.
  const fs::path tmp_out = fs::path(out.string() + ".tmp");
  fs::remove(tmp_out);
  auto writer = std::make_unique<LayoutWriter>(tmp_out, layout);
  auto add_counts = [&](uint64_t rows, const LayoutChunk& c) {
    root.rows_read += rows;
    root.rows_skipped += c.rejects.size();
    root.examples_written += c.examples.size();
    for (auto t : c.examples.truncated) root.examples_truncated += t;
  };
  {
    std::vector<BlockSource> prefix;
    uint64_t expected = static_cast<uint64_t>(req.shard_index);
    for (uint64_t b : done) {
      const fs::path p = parts / block_name(b);
      if (b != expected) {  // cannot happen with in-order commits; redo anything after a gap
        fs::remove(p);
        continue;
      }
      LayoutReader r(p);
      root.rows_read += static_cast<uint64_t>(r.file().attr_int("/", "block_rows_seen"));
      root.rows_skipped += r.rejects();
      root.examples_written += r.examples();
      for (auto t : r.file().read<uint8_t>("examples/truncated", 0, r.examples())) root.examples_truncated += t;
      prefix.push_back({p, 0, r.examples(), 0, r.rejects()});
      expected += static_cast<uint64_t>(req.shard_count);
    }
    copy_blocks(prefix, *writer);
    done.clear();
    for (uint64_t b = static_cast<uint64_t>(req.shard_index); b < expected; b += static_cast<uint64_t>(req.shard_count))
      done.insert(b);
  }

  auto reader = open_dataset(cfg.dataset);
  PipelineProgress progress;
  std::atomic<double> fraction{0.0};
  uint64_t next_block = done.empty() ? static_cast<uint64_t>(req.shard_index) : *done.rbegin() + req.shard_count;
  auto commit = [&](uint64_t block, uint64_t rows, LayoutChunk&& chunk) {
    if (block != next_block) throw Error("internal: block " + std::to_string(block) + " committed out of order");
    next_block += static_cast<uint64_t>(req.shard_count);
    const fs::path final_path = parts / block_name(block), tmp = fs::path(final_path.string() + ".tmp");
    {
      LayoutWriter w(tmp, layout, static_cast<int64_t>(chunk.attention.size() / attention_value_size(layout.dtype)));
      w.append(chunk);
      auto& f = w.file();
      f.set_attr("/", "format", std::string(kFormatName));
      f.set_attr("/", "format_version", kFormatVersion);
      f.set_attr("/", "block", static_cast<int64_t>(block));
      f.set_attr("/", "block_rows_seen", static_cast<int64_t>(rows));
      f.flush();
    }
    durable_rename(tmp, final_path);
    writer->append(chunk);
    add_counts(rows, chunk);
    fraction = reader->fraction();
  };
  PipelineResult result;
  {
    std::unique_ptr<ProgressReporter> reporter;
    if (req.progress) reporter = std::make_unique<ProgressReporter>(progress, fraction, log);
    result = run_pipeline(*reader, tokenizer, encoder, ps, [&](uint64_t b) { return done.count(b) > 0; }, commit, stop,
                          progress);
  }
  if (!result.reached_end) {
    writer.reset();
    fs::remove(tmp_out);
    log << "interrupted: " << progress.blocks.load() << " new block(s) committed (" << (done.size() + progress.blocks.load())
        << " in all) in " << parts.string() << ". Rerun the same command to resume.\n";
    return kRunInterrupted;
  }
  const uint64_t blocks_total = (result.rows_total + cfg.block_rows - 1) / cfg.block_rows;
  if (next_block < blocks_total)
    throw Error("internal: input ended at block " + std::to_string(next_block) + " of " + std::to_string(blocks_total));

  const auto t_finish = std::chrono::steady_clock::now();
  const uint64_t attention_values = writer->attention_values();
  write_root(writer->file(), root);
  writer->file().flush();
  writer.reset();
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
