#include "store/output_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "common/error.hpp"
#include "common/version.hpp"
#include "common/durable.hpp"
#include "common/unique_fd.hpp"

namespace attnscan {

std::string RunIdentity::difference(const RunIdentity& o) const {
  auto short_hash = [](const std::string& h) { return h.substr(0, 12); };
  std::string out;
  auto add = [&](const std::string& what) { out += (out.empty() ? "" : "; ") + what; };
  if (model_sha256 != o.model_sha256)
    add("the model weights changed (sha256 " + short_hash(model_sha256) + "... -> " + short_hash(o.model_sha256) + "...)");
  if (dataset_sha256 != o.dataset_sha256)
    add("the dataset changed (sha256 " + short_hash(dataset_sha256) + "... -> " + short_hash(o.dataset_sha256) + "...)");
  if (detector_builds != o.detector_builds) {
    auto builds = [](const std::string& text) {  // name -> "version V, library sha256 X..."
      std::map<std::string, std::string> m;
      std::istringstream in(text);
      std::string name, version, hash;
      while (in >> name >> version >> hash) m[name] = "version " + version + ", library sha256 " + hash.substr(0, 12) + "...";
      return m;
    };
    auto a = builds(detector_builds), b = builds(o.detector_builds);
    for (const auto& [name, build] : b)
      if (a.count(name) && a[name] != build) add("the detector plugin " + name + " changed (" + a[name] + " -> " + build + ")");
  }
  if (config_identity != o.config_identity) {
    std::string changed;
    auto lines = [](const std::string& t) {
      std::map<std::string, std::string> m;
      std::size_t pos = 0;
      while (pos < t.size()) {
        auto end = t.find('\n', pos);
        std::string line = t.substr(pos, end - pos);
        auto colon = line.find(": ");
        if (colon != std::string::npos) m[line.substr(0, colon)] = line.substr(colon + 2);
        pos = end == std::string::npos ? t.size() : end + 1;
      }
      return m;
    };
    auto a = lines(config_identity), b = lines(o.config_identity);
    for (const auto& [k, v] : a)
      if (b[k] != v) changed += (changed.empty() ? "" : ", ") + k + " '" + v + "' -> '" + b[k] + "'";
    add("the configuration changed (" + (changed.empty() ? std::string("options differ") : changed) + ")");
  }
  return out;
}

void write_root(h5::File& f, const RootInfo& r) {
  f.set_attr("/", "format", std::string(kFormatName));
  f.set_attr("/", "format_version", kFormatVersion);
  f.set_attr("/", "tool_version", std::string(kToolVersion));
  f.set_attr("/", "config", r.config_yaml);
  f.set_attr("/", "config_identity", r.identity.config_identity);
  f.set_attr("/", "model_dir", r.model_dir);
  f.set_attr("/", "model_config", r.model_config_json);
  f.set_attr("/", "model_sha256", r.identity.model_sha256);
  f.set_attr("/", "dataset", r.dataset);
  f.set_attr("/", "dataset_sha256", r.identity.dataset_sha256);
  f.set_attr("/", "detector_builds", r.identity.detector_builds);
  f.set_attr("/", "compute_platform", r.compute_platform);
  f.set_attr("/", "numerics", r.numerics);
  f.set_attr("/", "tokenizer", r.tokenizer);
  f.set_attr("/", "subword_kind", r.subword_kind);
  f.set_attr("/", "rows_read", static_cast<int64_t>(r.rows_read));
  f.set_attr("/", "examples_written", static_cast<int64_t>(r.examples_written));
  f.set_attr("/", "rows_skipped", static_cast<int64_t>(r.rows_skipped));
  f.set_attr("/", "examples_truncated", static_cast<int64_t>(r.examples_truncated));
  f.set_attr("/", "block_rows", static_cast<int64_t>(r.block_rows));
  f.set_attr("/", "shard_index", r.shard_index);
  f.set_attr("/", "shard_count", r.shard_count);
  f.set_attr("/", "shard", std::to_string(r.shard_index) + "/" + std::to_string(r.shard_count));
}

RootInfo read_root(const h5::File& f) {
  RootInfo r;
  r.config_yaml = f.attr_string("/", "config");
  r.identity.config_identity = f.attr_string("/", "config_identity");
  r.model_dir = f.attr_string("/", "model_dir");
  r.model_config_json = f.attr_string("/", "model_config");
  r.identity.model_sha256 = f.attr_string("/", "model_sha256");
  r.dataset = f.attr_string("/", "dataset");
  r.identity.dataset_sha256 = f.attr_string("/", "dataset_sha256");
  if (f.has_attr("/", "detector_builds")) r.identity.detector_builds = f.attr_string("/", "detector_builds");
  if (f.has_attr("/", "compute_platform")) r.compute_platform = f.attr_string("/", "compute_platform");
  if (f.has_attr("/", "numerics")) r.numerics = f.attr_string("/", "numerics");
  if (f.has_attr("/", "tokenizer")) r.tokenizer = f.attr_string("/", "tokenizer");
  r.subword_kind = f.has_attr("/", "subword_kind") ? f.attr_string("/", "subword_kind") : "WordPiece";  // older files: BERT only
  r.rows_read = static_cast<uint64_t>(f.attr_int("/", "rows_read"));
  r.examples_written = static_cast<uint64_t>(f.attr_int("/", "examples_written"));
  r.rows_skipped = static_cast<uint64_t>(f.attr_int("/", "rows_skipped"));
  r.examples_truncated = static_cast<uint64_t>(f.attr_int("/", "examples_truncated"));
  r.block_rows = static_cast<uint64_t>(f.attr_int("/", "block_rows"));
  r.shard_index = f.attr_int("/", "shard_index");
  r.shard_count = f.attr_int("/", "shard_count");
  return r;
}

std::filesystem::path write_rejects_tsv(const std::filesystem::path& source, const std::filesystem::path& out) {
  const std::filesystem::path path = out.string() + ".rejects.tsv", tmp = path.string() + ".tmp";
  {
    LayoutReader r(source);
    std::ofstream f(tmp, std::ios::binary);
    f << "index\tfile\tline\treason\n";
    auto c = r.read(0, 0, 0, r.rejects());
    for (std::size_t i = 0; i < c.rejects.size(); ++i)
      f << c.rejects.index[i] << "\t" << c.rejects.file[i] << "\t" << c.rejects.line[i] << "\t" << c.rejects.reason[i] << "\n";
  }
  durable_rename(tmp, path);
  return path;
}

void copy_blocks(const std::vector<BlockSource>& sources, LayoutWriter& out, bool without_attention) {
  constexpr uint64_t kMaxBytes = 64ull << 20;  // bound memory per piece
  std::unique_ptr<LayoutReader> reader;
  std::filesystem::path open_path;
  for (const auto& s : sources) {
    if (!reader || open_path != s.file) {
      reader = std::make_unique<LayoutReader>(s.file);
      open_path = s.file;
    }
    const auto vs = attention_value_size(reader->params().dtype);
    auto n_tokens = reader->file().read<int64_t>("examples/n_tokens", s.a, s.b);
    auto offsets = reader->file().read<int64_t>("examples/attention_offset", s.a, s.b);
    std::size_t i = s.a;
    bool rejects_done = false;
    while (i < s.b || !rejects_done) {
      std::size_t j = i;
      uint64_t bytes = 0;
      while (j < s.b && (j == i || bytes < kMaxBytes)) {
        if (offsets[j - s.a] >= 0 && !without_attention) bytes += reader->attention_count(n_tokens[j - s.a]) * vs;
        ++j;
      }
      // Rejects travel with the first piece of the block.
      out.append(reader->read(i, j, rejects_done ? s.d : s.c, s.d, without_attention));
      rejects_done = true;
      i = j;
    }
  }
}

// OUT.tmp for the final metadata pass. If an earlier finishing pass was killed and left it
// unreadable, a fresh file is made and the attention bytes (never touched by HDF5) moved over.
LayoutWriter reopen_or_rebuild(const std::filesystem::path& tmp, const LayoutParams& layout, uint64_t values, uint64_t at,
                               std::ostream& log) {
  try {
    return LayoutWriter::reopen(tmp, layout);
  } catch (const Error& e) {
    log << "note: " << tmp.string() << " was damaged by an interruption (" << e.what() << "); rebuilding it\n";
  }
  const std::filesystem::path fresh = tmp.string() + ".rebuild";
  uint64_t fresh_at = 0;
  {
    LayoutWriter w(fresh, layout, static_cast<int64_t>(values), true);
    fresh_at = w.attention_file_offset();
    w.file().flush();
  }
  const uint64_t bytes = values * attention_value_size(layout.dtype);
  {
    const UniqueFd in(::open(tmp.c_str(), O_RDONLY | O_CLOEXEC)), out(::open(fresh.c_str(), O_WRONLY | O_CLOEXEC));
    if (!in || !out) throw Error(tmp.string() + ": cannot rebuild");
    std::vector<uint8_t> buf(std::min<uint64_t>(64u << 20, std::max<uint64_t>(bytes, 1)));
    for (uint64_t done = 0; done < bytes;) {
      const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(buf.size(), bytes - done));
      if (!read_all_at(in.get(), buf.data(), n, at + done)) throw Error(tmp.string() + ": cannot read attention while rebuilding");
      write_all_at(out.get(), buf.data(), n, fresh_at + done, fresh);
      done += n;
    }
  }
  durable_rename(fresh, tmp);
  return LayoutWriter::reopen(tmp, layout);
}

}  // namespace attnscan
