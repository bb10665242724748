#pragma once
// Head importance in a run (importance.*, docs/analyses.md "Does the head matter?"): which rows get
// it, the masking rule of the mlm objective, each row's class for the classification one, and where
// the values go (score outputs importance/ablation and importance/gradient, [N, L, H] as a
// detector's; rows not sampled hold NaN).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dataset/dataset.hpp"
#include "encoder/encoder.hpp"
#include "model/task_heads.hpp"
#include "store/layout_file.hpp"

namespace attnscan {

inline constexpr const char* kImportanceDetector = "importance";  // the score group's name
inline constexpr const char* kAblationOutput = "ablation";
inline constexpr const char* kGradientOutput = "gradient";

struct ImportanceSettings {
  bool ablation = false;
  const TaskHead* head = nullptr;  // gradient importance with this head's loss; null: none
  uint64_t every = 1;              // rows whose index is a multiple of this
  int64_t mlm_every = 7;           // the masking rule's period
  int64_t mask_id = -1;            // mlm: the tokenizer's mask token
  std::string label_file;          // classification: where labels are read (for messages)

  bool enabled() const { return ablation || head; }
  bool sampled(uint64_t row_index) const { return enabled() && every > 0 && row_index % every == 0; }
};

// The score outputs a run with these settings stores (none when disabled).
std::vector<ScoreOutput> importance_outputs(const ImportanceSettings& s);

// The mlm objective's masked positions: the encoding's content tokens (not special) numbered 0, 1, ...
// in order, those whose number is a multiple of `every`.
std::vector<int64_t> mlm_masked_positions(const Encoding& e, int64_t every);

// The class of a record for the classification head; Error naming the file, row and label when it
// has none or it is no class of the head (called before the row's block runs the model).
int64_t record_class(const ImportanceSettings& s, const PairRecord& r);

// The request for rows of one batch: labels (one per row) or masked positions.
ImportanceRequest importance_request(const ImportanceSettings& s, const std::vector<const Encoding*>& rows,
                                     const std::vector<int64_t>& classes);

}  // namespace attnscan
