#pragma once
// The life cycle of one output OUT.h5, owned in one place: the lock, the identity that guards resume,
// the decision (already complete, resume, or fresh), where attention goes while its block is in
// flight, block commits, and the end: assembling OUT.h5.tmp and renaming it to OUT.h5, or, after a
// failure, saying what was kept and how to go on.
//
//   OUT.h5.lock       held while a run or merge writes (store/output_lock.hpp)
//   OUT.h5.parts/     identity.txt, one committed block-N.h5 per block, *.spill while in flight
//   OUT.h5.tmp        the final file being written (uncompressed attention goes there directly)
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>

#include "store/background_writeback.hpp"
#include "store/layout_file.hpp"
#include "store/output_file.hpp"
#include "store/output_lock.hpp"
#include "common/unique_fd.hpp"

namespace attnscan {

// Where each block's attention starts (in values) and how much there is: from a tokenizing pre-pass.
struct AttentionPlan {
  std::map<uint64_t, uint64_t> block_start;
  uint64_t total_values = 0;
  bool exact = false;  // total_values is known (a pre-pass, or 0 for a run that stores none), not just unplanned
};

struct FinishedOutput {
  RootInfo root;                  // with the counts of every block
  uint64_t attention_values = 0;  // in the file
};

class OutputSession {
 public:
  // Takes the output's lock (or names the process holding it).
  OutputSession(std::filesystem::path out, const std::string& holder);
  OutputSession(const OutputSession&) = delete;
  OutputSession& operator=(const OutputSession&) = delete;
  ~OutputSession();

  // Decides what to do for a run with this identity: false when OUT.h5 is already complete from the
  // same run (nothing to do). Refuses, naming what changed, an output or parts folder of another
  // run; --overwrite (`overwrite`) discards them. On resume every committed block part is checked
  // completely (store/file_check.hpp); one that fails is removed and redone, with a line in `log`.
  bool begin(const RootInfo& root, const LayoutParams& layout, bool overwrite, std::ostream& log);
  const std::set<uint64_t>& committed() const { return committed_; }

  // Uncompressed attention of a known size goes straight into OUT.h5.tmp; without a plan (compressed
  // or scores-only), each block's attention waits in a spill file until the block commits. From a fresh
  // start OUT.h5.tmp also takes each block's rows as it commits, except for uncompressed attention of
  // unknown size (plan not exact), which finish() assembles. When an
  // OUT.h5.tmp is kept on resume, each committed block's attention in it is checked against the
  // CRC-32C recorded at its commit; a block that fails is redone, with a line in `log`.
  void plan_attention(AttentionPlan plan, std::ostream& log);
  // Thread-safe: `bytes` of the storage dtype for the example at `offset` values into `block`.
  void write_attention(uint64_t block, uint64_t offset, const uint8_t* data, std::size_t bytes);
  // Serial, in any block order: makes block `block` durable (its rows, metadata and attention).
  void commit(uint64_t block, uint64_t rows_seen, LayoutChunk&& chunk);
  // Blocks in flight when a run stops are dropped (redone on resume).
  void drop_in_flight();

  // Every block of the shard is committed: assembles OUT.h5, renames it into place, removes the parts.
  FinishedOutput finish(uint64_t rows_total, std::ostream& log);
  // Appended to the message of a failure: what stays (committed blocks) and how to go on (`next_step`,
  // or else: rerun the same command, it resumes); when nothing was committed, removes the leftovers and
  // says so.
  std::string failure_note(const std::string& next_step = "");

  const std::filesystem::path& path() const { return out_; }
  std::filesystem::path parts() const;

 private:
  std::filesystem::path tmp() const { return out_.string() + ".tmp"; }
  std::filesystem::path spill_path(uint64_t block) const;
  void check_free_space(uint64_t bytes) const;
  // Finishing copies every block part into OUT.h5.tmp while they stay: refuses to go on once the disk
  // cannot hold that copy, keeping what is committed.
  void check_room_to_finish() const;
  void redo(uint64_t block, const std::string& why, std::ostream& log);
  void keep_verified_blocks(std::ostream& log);       // block parts
  void keep_verified_attention(std::ostream& log);    // their attention in a kept OUT.h5.tmp
  // CRC-32C of values [first, first + count) of the attention in OUT.h5.tmp, read back; false if short.
  // What it reads gives checksums_ its spans.
  bool tmp_crc(uint64_t first, uint64_t count, uint32_t& crc);

  std::filesystem::path out_;
  OutputLock lock_;
  RootInfo root_;
  LayoutParams layout_;
  std::set<uint64_t> committed_;
  uint64_t parts_bytes_ = 0;  // on disk, of the committed block parts
  AttentionPlan plan_;
  bool direct_ = false;        // attention written raw into OUT.h5.tmp
  uint64_t attention_at_ = 0;  // byte offset of attention/values in OUT.h5.tmp
  UniqueFd fd_;                // OUT.h5.tmp, while direct
  std::unique_ptr<BackgroundWriteback> writeback_;  // of fd_, while blocks run
  std::mutex spill_mutex_;
  std::map<uint64_t, UniqueFd> spills_;  // block -> open spill file
  // OUT.h5.tmp, taking each block at its commit while they come in order (block next_block_ next).
  std::unique_ptr<LayoutWriter> assembled_;
  uint64_t next_block_ = 0;
  // The attention in OUT.h5.tmp as it was written (and as a resume's checks read it back), under its mutex:
  // blocks in flight write while another commits.
  std::mutex checksums_mutex_;
  SpanChecksums checksums_;
};

}  // namespace attnscan
