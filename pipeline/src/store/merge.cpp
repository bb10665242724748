#include "store/merge.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "common/error.hpp"
#include "store/attention_checksums.hpp"
#include "common/durable.hpp"
#include "store/output_file.hpp"
#include "store/output_lock.hpp"
#include "store/offset_baselines.hpp"
#include "store/score_stats.hpp"

namespace attnscan {

namespace fs = std::filesystem;

void merge_shards(const fs::path& out, const std::vector<fs::path>& shards, bool overwrite, bool virtual_attention,
                  std::ostream& log) {
  if (shards.empty()) throw Error("merge: no shard files given");
  const OutputLock lock(out, "attnscan merge");
  if (fs::exists(out) && !overwrite) throw Error(out.string() + " exists; remove it or pass --overwrite");
  std::vector<RootInfo> roots;
  std::map<int64_t, fs::path> by_index;
  for (const auto& s : shards) {
    if (const std::string h = OutputLock::holder(s); !h.empty())
      throw Error(s.string() + " is locked: another attnscan process is writing it (" + h +
                  "); wait for it to finish, then merge");
    if (!fs::exists(s)) {
      if (fs::exists(s.string() + ".parts"))
        throw Error(s.string() + ": shard not finished (only " + s.string() + ".parts exists); rerun that shard first");
      throw Error(s.string() + ": no such shard file");
    }
    LayoutReader r(s);
    roots.push_back(read_root(r.file()));
    const auto& root = roots.back();
    const std::string me = std::to_string(root.shard_index) + "/" + std::to_string(root.shard_count);
    if (roots.size() > 1) {
      const auto& first = roots.front();
      std::string diff = first.identity.difference(root.identity);
      if (!diff.empty()) throw Error(s.string() + ": incompatible with " + shards.front().string() + ": " + diff);
      if (root.shard_count != first.shard_count)
        throw Error(s.string() + ": shard " + me + " belongs to a " + std::to_string(root.shard_count) + "-way split, " +
                    shards.front().string() + " to a " + std::to_string(first.shard_count) + "-way split");
      if (root.block_rows != first.block_rows) throw Error(s.string() + ": different pipeline.block_rows");
    }
    auto [it, fresh] = by_index.emplace(root.shard_index, s);
    if (!fresh) throw Error("shard " + me + " given twice: " + it->second.string() + " and " + s.string());
  }
  const int64_t n = roots.front().shard_count;
  std::string missing;
  for (int64_t i = 0; i < n; ++i)
    if (!by_index.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(n);
  if (!missing.empty()) throw Error("merge: missing shard(s) " + missing);

  // Blocks of every shard, in block order (blocks never overlap between shards).
  const uint64_t block_rows = roots.front().block_rows;
  std::vector<std::pair<uint64_t, BlockSource>> blocks;
  RootInfo merged = roots.front();
  merged.rows_read = merged.rows_skipped = merged.examples_written = merged.examples_truncated = 0;
  merged.shard_index = 0;
  merged.shard_count = 1;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const auto& r = roots[k];
    merged.rows_read += r.rows_read;
    merged.rows_skipped += r.rows_skipped;
    merged.examples_written += r.examples_written;
    merged.examples_truncated += r.examples_truncated;
    std::istringstream lines(r.numerics);  // shards computed elsewhere: every distinct numerics listed
    for (std::string line; std::getline(lines, line);)
      if (merged.numerics.find(line + "\n") == std::string::npos) merged.numerics += line + "\n";
    LayoutReader reader(shards[k]);
    auto ex = reader.file().read<uint64_t>("examples/index", 0, reader.examples());
    auto rj = reader.file().read<uint64_t>("rejects/index", 0, reader.rejects());
    std::map<uint64_t, BlockSource> mine;
    for (std::size_t i = 0; i < ex.size(); ++i) {
      auto& b = mine.try_emplace(ex[i] / block_rows, BlockSource{shards[k], i, i, 0, 0}).first->second;
      b.b = i + 1;
    }
    for (std::size_t i = 0; i < rj.size(); ++i) {
      auto it = mine.find(rj[i] / block_rows);
      if (it == mine.end()) it = mine.emplace(rj[i] / block_rows, BlockSource{shards[k], 0, 0, i, i}).first;
      if (it->second.d == it->second.c) it->second.c = i;
      it->second.d = i + 1;
    }
    for (auto& [block, src] : mine) blocks.emplace_back(block, src);
  }
  std::sort(blocks.begin(), blocks.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<BlockSource> sources;
  for (auto& [block, src] : blocks) sources.push_back(src);

  const fs::path tmp = out.string() + ".tmp";
  {
    const LayoutParams params = LayoutReader(shards.front()).params();
    LayoutWriter w = virtual_attention ? LayoutWriter::with_virtual_attention(tmp, params) : LayoutWriter(tmp, params);
    copy_blocks(sources, w, virtual_attention);
    if (virtual_attention)
      w.finish_virtual_attention();
    else
      write_attention_checksums(w.file(), w.appended_attention());
    write_score_aggregates(w.file(), LayoutReader(shards.front()).params());
    write_offset_baselines(w.file(), LayoutReader(shards.front()).params());
    write_root(w.file(), merged);
    w.file().flush();
  }
  if (merged.rows_skipped > 0) write_rejects_tsv(tmp, out);
  durable_rename(tmp, out);
  log << "merged " << shards.size() << " shards into " << out.string() << ": " << merged.examples_written << " examples, "
      << merged.rows_skipped << " skipped rows"
      << (virtual_attention ? "; its attention is a virtual dataset over the shards (keep them beside it)" : "") << "\n";
}

}  // namespace attnscan
