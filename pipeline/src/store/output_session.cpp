#include "store/output_session.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <memory>

#include "common/error.hpp"
#include "store/attention_checksums.hpp"
#include "store/byte_count.hpp"
#include "store/crc32c.hpp"
#include "common/durable.hpp"
#include "store/file_check.hpp"
#include "store/parts_folder.hpp"
#include "store/offset_baselines.hpp"
#include "store/score_stats.hpp"

namespace attnscan {

namespace fs = std::filesystem;

namespace {

std::string shard_text(const RootInfo& r) { return std::to_string(r.shard_index) + "/" + std::to_string(r.shard_count); }

// Root attributes of a block part that prove its attention in OUT.h5.tmp: where it is and its CRC-32C.
constexpr const char* kAttentionFirst = "attention_first";
constexpr const char* kAttentionValues = "attention_values";
constexpr const char* kAttentionCrc = "attention_crc32c";

}  // namespace

OutputSession::OutputSession(fs::path out, const std::string& holder) : out_(std::move(out)), lock_(out_, holder) {}

OutputSession::~OutputSession() { drop_in_flight(); }

fs::path OutputSession::parts() const { return parts_dir(out_); }

fs::path OutputSession::spill_path(uint64_t block) const { return parts() / (block_name(block) + ".spill"); }

bool OutputSession::begin(const RootInfo& root, const LayoutParams& layout, bool overwrite, std::ostream& log) {
  root_ = root;
  layout_ = layout;
  if (fs::exists(out_) && !overwrite) {  // a complete output from the same run: nothing to do
    RootInfo existing;
    try {
      existing = read_root(LayoutReader(out_).file());
    } catch (const Error& e) {
      throw Error(out_.string() + " exists and is not a readable attnscan output; remove it or pass --overwrite (" +
                  e.what() + ")");
    }
    const std::string diff = existing.identity.difference(root.identity);
    if (diff.empty() && shard_text(existing) == shard_text(root)) {
      log << out_.string() << " is already complete (" << existing.examples_written << " examples); nothing to do\n";
      return false;
    }
    throw Error(out_.string() + " exists from a different run (" + (diff.empty() ? "another shard" : diff) +
                "); remove it or pass --overwrite");
  }
  if (fs::exists(parts()) && overwrite) fs::remove_all(parts());
  if (fs::exists(parts())) {
    std::string shard;
    std::string diff = read_identity(parts(), shard).difference(root.identity);
    if (shard != shard_text(root))
      diff += (diff.empty() ? "" : "; ") + std::string("the shard changed (" + shard + " -> " + shard_text(root) + ")");
    if (!diff.empty())
      throw Error("refusing to resume into " + parts().string() + ": " + diff +
                  ". Rerun with the original settings, or pass --overwrite to start over");
    remove_interrupted_commits(parts());
    committed_ = committed_blocks(parts());
    keep_verified_blocks(log);
    for (uint64_t b : committed_) parts_bytes_ += fs::file_size(parts() / block_name(b));
    log << "resuming: " << committed_.size() << " block(s) already committed in " << parts().string() << "\n";
  } else {
    fs::create_directories(parts());
    write_identity(parts(), root.identity, static_cast<int>(root.shard_index), static_cast<int>(root.shard_count));
  }
  root_.numerics = note_numerics(parts(), root.numerics, log);
  return true;
}

void OutputSession::redo(uint64_t block, const std::string& why, std::ostream& log) {
  log << "note: " << (parts() / block_name(block)).string() << ": " << why << "; redoing block " << block << "\n";
  std::error_code ec;
  const uint64_t size = fs::file_size(parts() / block_name(block), ec);
  if (!ec) parts_bytes_ -= std::min(parts_bytes_, size);
  fs::remove(parts() / block_name(block));
  committed_.erase(block);
}

void OutputSession::keep_verified_blocks(std::ostream& log) {
  CheckOptions structure_and_checksums;
  structure_and_checksums.row_sums = false;
  for (uint64_t b : std::set<uint64_t>(committed_)) {
    const fs::path p = parts() / block_name(b);
    const CheckReport r = check_layout_file(p, structure_and_checksums);
    if (!r.ok()) redo(b, "damaged (" + r.problems.front() + ")", log);
    else if (r.format_version < kFirstChecksummedVersion)
      redo(b, "committed by an older attnscan without checksums, so it cannot be proven intact", log);
    else if (r.format_version < kFirstCharOffsetsVersion)
      redo(b, "committed by an older attnscan without the tokens' character offsets", log);
    else if (r.format_version < kFirstTextChecksumVersion)
      redo(b, "committed by an older attnscan without checksums of its text, so it cannot be proven intact", log);
  }
}

bool OutputSession::tmp_crc(uint64_t first, uint64_t count, uint32_t& crc) {
  const std::size_t vs = attention_value_size(layout_.dtype);
  constexpr uint64_t kSpansPerRead = 128;  // reads end on span boundaries, so most spans come whole
  std::vector<uint8_t> buf(static_cast<std::size_t>(std::min(count, kChecksumSpan * kSpansPerRead) * vs));
  crc = 0;
  for (uint64_t at = first, end = first + count; at < end;) {
    const uint64_t n = std::min(end, (at / kChecksumSpan + kSpansPerRead) * kChecksumSpan) - at;
    if (!read_all_at(fd_.get(), buf.data(), static_cast<std::size_t>(n * vs), attention_at_ + at * vs))
      return false;  // the file ends before the block's attention: truncated
    std::lock_guard<std::mutex> lock(checksums_mutex_);  // a resume's checks, or a commit's fallback: rare
    crc = crc32c_combine(crc, checksums_.add(at, buf.data(), n, vs), n * vs);
    at += n;
  }
  return true;
}

void OutputSession::keep_verified_attention(std::ostream& log) {
  for (uint64_t b : std::set<uint64_t>(committed_)) {
    int64_t first = 0, count = 0, crc = 0;
    try {
      const h5::File f = h5::File::open_read(parts() / block_name(b));
      if (!f.has_attr("/", kAttentionCrc)) {
        redo(b, "no checksum of its attention in " + tmp().string() + ", so it cannot be proven intact", log);
        continue;
      }
      first = f.attr_int("/", kAttentionFirst);
      count = f.attr_int("/", kAttentionValues);
      crc = f.attr_int("/", kAttentionCrc);
    } catch (const Error& e) {
      redo(b, std::string("damaged (") + e.what() + ")", log);
      continue;
    }
    uint32_t now = 0;
    if (first < 0 || count < 0 || !tmp_crc(static_cast<uint64_t>(first), static_cast<uint64_t>(count), now) ||
        now != static_cast<uint32_t>(crc))
      redo(b, "its attention in " + tmp().string() + " fails its checksum (damaged)", log);
  }
}

void OutputSession::check_free_space(uint64_t bytes) const {
  const fs::path dir = fs::absolute(out_).parent_path();
  std::error_code ec;
  const auto space = fs::space(dir, ec);
  if (ec || bytes <= space.available) return;
  throw Error("the attention of this run needs " + human_bytes(bytes) + " in " + dir.string() + ", " +
              human_bytes(space.available) +
              " free. Free space, or store less: output.attention_every, output.dtype: uint8, output.layers/heads, "
              "output.compression: lz4");
}

void OutputSession::check_room_to_finish() const {
  // The attention of blocks still to come (OUT.h5.tmp's place for it is not written yet, so not yet on
  // disk), and unless the blocks go into OUT.h5.tmp as they commit, the copy of every part.
  uint64_t attention = 0;
  if (direct_)
    for (auto it = plan_.block_start.begin(); it != plan_.block_start.end(); ++it) {
      const auto next = std::next(it);
      if (!committed_.count(it->first)) attention += (next == plan_.block_start.end() ? plan_.total_values : next->second) - it->second;
    }
  const uint64_t copy = assembled_ ? 0 : parts_bytes_, need = copy + attention * attention_value_size(layout_.dtype);
  std::error_code ec;
  const auto space = fs::space(fs::absolute(out_).parent_path(), ec);
  if (ec || need <= space.available) return;
  throw Error(out_.string() + ": the disk has " + human_bytes(space.available) + " free, and the rest of this run needs " +
              human_bytes(need) + " (the attention of the blocks still to come, " + human_bytes(need - copy) +
              ", and the copy of the " + std::to_string(committed_.size()) + " block part(s) in " + parts().string() +
              " into the final file, " + human_bytes(copy) + "). Free space, then rerun the same command: it resumes");
}

void OutputSession::plan_attention(AttentionPlan plan, std::ostream& log) {
  plan_ = std::move(plan);
  direct_ = plan_.total_values > 0;  // scores only, or no pair stored: nothing to write raw
  next_block_ = static_cast<uint64_t>(root_.shard_index);
  if (!direct_) {
    // Compressed attention (chunked), or none: OUT.h5.tmp can take the blocks as they commit. Uncompressed
    // attention of unknown size needs its total first, so finish() assembles it.
    if (committed_.empty() && (layout_.compression != Compression::None || plan_.exact))
      assembled_ = std::make_unique<LayoutWriter>(tmp(), layout_, plan_.exact ? 0 : -1);
    return;
  }
  const fs::path note = parts() / "attention.txt";  // "total offset" of the OUT.h5.tmp in use
  uint64_t noted_total = 0;
  bool reuse = false;
  if (fs::exists(note) && fs::exists(tmp())) {
    std::ifstream in(note);
    reuse = static_cast<bool>(in >> noted_total >> attention_at_) && noted_total == plan_.total_values;
  }
  if (!reuse) {
    check_free_space(plan_.total_values * attention_value_size(layout_.dtype));
    if (!committed_.empty()) log << "note: " << tmp().string() << " missing or stale: redoing all blocks\n";
    for (uint64_t b : committed_) fs::remove(parts() / block_name(b));
    committed_.clear();
    assembled_ = std::make_unique<LayoutWriter>(tmp(), layout_, static_cast<int64_t>(plan_.total_values), /*external_attention=*/true);
    attention_at_ = assembled_->attention_file_offset();
    assembled_->file().flush();
    fsync_path(tmp());
    {
      std::ofstream o(note.string() + ".tmp");
      o << plan_.total_values << " " << attention_at_ << "\n";
    }
    durable_rename(note.string() + ".tmp", note);
  }
  writeback_.reset();  // before the descriptor it uses
  fd_.reset(::open(tmp().c_str(), O_RDWR | O_CLOEXEC));
  if (!fd_) throw Error(tmp().string() + ": cannot open for writing attention");
  writeback_ = std::make_unique<BackgroundWriteback>(fd_.get(), std::chrono::milliseconds(50));
  if (reuse) keep_verified_attention(log);
}

void OutputSession::write_attention(uint64_t block, uint64_t offset, const uint8_t* data, std::size_t bytes) {
  const std::size_t vs = attention_value_size(layout_.dtype);
  if (direct_) {
    const uint64_t first = plan_.block_start.at(block) + offset;
    write_all_at(fd_.get(), data, bytes, attention_at_ + first * vs, tmp());
    // Checksummed while the bytes are still in cache: the commit records them without reading them back.
    const std::vector<SpanChecksums::Cut> cuts = SpanChecksums::cut(first, data, bytes / vs, vs);
    std::lock_guard<std::mutex> lock(checksums_mutex_);
    checksums_.put(cuts);
    return;
  }
  int spill;
  {
    std::lock_guard<std::mutex> lock(spill_mutex_);
    auto it = spills_.find(block);
    if (it == spills_.end()) {
      UniqueFd f(::open(spill_path(block).c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
      if (!f) throw Error(spill_path(block).string() + ": cannot create");
      it = spills_.emplace(block, std::move(f)).first;
    }
    spill = it->second.get();
  }
  write_all_at(spill, data, bytes, offset * vs, spill_path(block));
}

void OutputSession::commit(uint64_t block, uint64_t rows_seen, LayoutChunk&& chunk) {
  const std::size_t vs = attention_value_size(layout_.dtype);
  uint64_t first = 0, values = 0;  // the block's attention in OUT.h5.tmp
  uint32_t crc = 0;
  if (direct_) {  // the attention is in OUT.h5.tmp already: make it durable, point the rows at it
    if (::fdatasync(fd_.get()) != 0) throw Error(tmp().string() + ": fdatasync failed");
    const uint64_t start = plan_.block_start.at(block);
    const auto& e = chunk.examples;
    const uint64_t per_token2 = layout_.layers.size() * layout_.heads.size();
    first = start;
    for (std::size_t i = 0; i < e.size(); ++i) {
      auto& o = chunk.examples.attention_offset[i];
      if (o < 0) continue;
      o += static_cast<int64_t>(start);
      if (values == 0) first = static_cast<uint64_t>(o);
      const auto n = static_cast<uint64_t>(e.n_tokens[i]);
      values = static_cast<uint64_t>(o) + per_token2 * n * n - first;
    }
    // Recorded with the commit, checked on resume: the CRC-32C of the bytes as they were written (read
    // back where the writes did not tile the block's values).
    bool written = false;
    {
      std::lock_guard<std::mutex> lock(checksums_mutex_);
      written = checksums_.range(first, values, vs, crc);
    }
    if (!written && !tmp_crc(first, values, crc))
      throw Error(tmp().string() + ": cannot read back the attention of block " + std::to_string(block));
    // Durable and checksummed: its pages may leave the page cache (a hint; dirty or busy pages stay). Kept,
    // every further write lands on pages the kernel has to find afresh (5x its CPU per byte written,
    // bench/page_cache_bench.py) and a corpus-sized output crowds the rest of the cache out. (A length of
    // 0 would mean up to the end of the file.)
    if (values > 0)
      ::posix_fadvise(fd_.get(), static_cast<off_t>(attention_at_ + first * vs), static_cast<off_t>(values * vs),
                      POSIX_FADV_DONTNEED);
  }
  UniqueFd spill;
  if (!direct_) {
    std::lock_guard<std::mutex> lock(spill_mutex_);
    if (auto it = spills_.find(block); it != spills_.end()) {
      spill = std::move(it->second);
      spills_.erase(it);
    }
  }
  // The block goes into OUT.h5.tmp too while blocks commit in order from a fresh start (finish() then
  // has nothing to copy); one out of order ends that, and finish() copies every part.
  const bool assemble = assembled_ && block == next_block_;
  if (!assemble) assembled_.reset();
  const fs::path final_path = parts() / block_name(block), part_tmp = fs::path(final_path.string() + ".tmp");
  struct stat spilled {};
  if (spill && ::fstat(spill.get(), &spilled) != 0) throw Error(spill_path(block).string() + ": cannot stat");
  try {
    LayoutWriter w = LayoutWriter::for_block(part_tmp, layout_, chunk, static_cast<uint64_t>(spilled.st_size) / vs);
    w.skip_attention_checksums();  // its attention reaches the final file's checksums through assembled_ or copy_blocks
    w.append(chunk);
    if (assemble) assembled_->append(chunk);
    if (spill) {  // the block's attention, in pieces of bounded size
      std::vector<uint8_t> buf(16u << 20);
      for (off_t at = 0;;) {
        const ssize_t r = ::pread(spill.get(), buf.data(), buf.size(), at);
        if (r < 0) throw Error(spill_path(block).string() + ": read failed");
        if (r == 0) break;
        w.append_attention(buf.data(), static_cast<uint64_t>(r) / vs);
        if (assemble) assembled_->append_attention(buf.data(), static_cast<uint64_t>(r) / vs);
        at += r;
      }
      spill.reset();
      fs::remove(spill_path(block));
    }
    auto& f = w.file();
    f.set_attr("/", "format", std::string(kFormatName));
    f.set_attr("/", "format_version", kFormatVersion);
    f.set_attr("/", "block", static_cast<int64_t>(block));
    f.set_attr("/", "block_rows_seen", static_cast<int64_t>(rows_seen));
    f.set_attr("/", kExternalAttentionAttr, static_cast<int64_t>(direct_ ? 1 : 0));
    if (direct_) {
      f.set_attr("/", kAttentionFirst, static_cast<int64_t>(first));
      f.set_attr("/", kAttentionValues, static_cast<int64_t>(values));
      f.set_attr("/", kAttentionCrc, static_cast<int64_t>(crc));
    }
    f.flush();
  } catch (...) {  // a full disk, say: no half-written part is left to take its space
    std::error_code ec;
    fs::remove(part_tmp, ec);
    throw;
  }
  durable_rename(part_tmp, final_path);
  committed_.insert(block);
  parts_bytes_ += fs::file_size(final_path);
  if (assemble) next_block_ += static_cast<uint64_t>(root_.shard_count);
  check_room_to_finish();
}

void OutputSession::drop_in_flight() {
  std::lock_guard<std::mutex> lock(spill_mutex_);
  spills_.clear();  // closes them
}

FinishedOutput OutputSession::finish(uint64_t rows_total, std::ostream& log) {
  // Every block of this shard, in order: counts, then the metadata (and compressed attention).
  FinishedOutput done{root_, 0};
  RootInfo& root = done.root;
  const uint64_t blocks_total = (rows_total + root.block_rows - 1) / root.block_rows;
  std::vector<BlockSource> sources;
  int64_t attention_total = 0;
  for (uint64_t b = static_cast<uint64_t>(root.shard_index); b < blocks_total; b += static_cast<uint64_t>(root.shard_count)) {
    const fs::path p = parts() / block_name(b);
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
  done.attention_values = direct_ ? plan_.total_values : static_cast<uint64_t>(attention_total);
  try {
    std::unique_ptr<LayoutWriter> writer;
    writeback_.reset();
    fd_.reset();
    if (assembled_ && next_block_ >= blocks_total) {  // every block went in as it committed
      writer = std::move(assembled_);
    } else {
      assembled_.reset();
      if (direct_)
        writer = std::make_unique<LayoutWriter>(reopen_or_rebuild(tmp(), layout_, plan_.total_values, attention_at_, log));
      else
        writer = std::make_unique<LayoutWriter>(tmp(), layout_, attention_total);
      copy_blocks(sources, *writer);
    }
    write_attention_checksums(writer->file(), direct_ ? checksums_ : writer->appended_attention());
    write_score_aggregates(writer->file(), layout_);
    write_offset_baselines(writer->file(), layout_);
    write_root(writer->file(), root);
    writer->file().flush();
  } catch (const Error& e) {  // e.g. the disk filled up while assembling: every block stays committed
    throw Error(std::string(e.what()) + "\n" + failure_note());
  }
  if (root.rows_skipped > 0) {
    const fs::path rejects = write_rejects_tsv(tmp(), out_);
    log << "  " << root.rows_skipped << " skipped row(s) listed in " << rejects.string() << "\n";
  }
  durable_rename(tmp(), out_);
  fs::remove_all(parts());
  return done;
}

std::string OutputSession::failure_note(const std::string& next_step) {
  drop_in_flight();
  assembled_.reset();
  std::error_code ec;
  if (!direct_) fs::remove(tmp(), ec);  // only the blocks assembled so far: finish() makes it anew
  if (committed_.empty()) {  // nothing worth keeping
    fd_.reset();
    fs::remove_all(parts(), ec);
    fs::remove(tmp(), ec);
    return "nothing was committed; no partial output is left behind.";
  }
  std::string kept = parts().string() + " (" + std::to_string(committed_.size()) + " committed block(s))";
  if (fs::exists(tmp())) kept += " and " + tmp().string();
  if (!next_step.empty()) return "kept: " + kept + ". " + next_step;
  return "kept: " + kept + ". Fix the cause and rerun the same command: it resumes from the committed blocks " +
         "(--overwrite starts over).";
}

}  // namespace attnscan
