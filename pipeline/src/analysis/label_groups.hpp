#pragma once
// Groups of examples by label, for `heads --by label` and the report's label sections.
#include <cstdint>
#include <string>
#include <vector>

#include "store/h5_file.hpp"

namespace attnscan {

struct LabelGroup {
  std::string name;           // the label, or "[lo, hi)" for a bin of a numeric label
  std::vector<uint8_t> mask;  // 1 for the examples in the group
  std::size_t size = 0;
};

// A numeric label with at most this many distinct integer values (PAWS 0/1, a 1-5 rating) is a class.
inline constexpr std::size_t kMaxClassValues = 10;

// Class labels: one group per distinct value, in sorted order (examples without a label are left
// out). A continuous label (e.g. STS-B similarity) needs `bins` > 0: that many equal-width bins
// between its minimum and maximum; without bins it is refused with an error saying what to do.
std::vector<LabelGroup> label_groups(const h5::File& file, std::size_t examples, int bins);

// The two groups (A, B) of a comparison A - B, at least two given: those named in `wanted` (two
// labels), else the two largest, the later label first (PAWS: 1 vs 0). `file` names the file in errors.
std::pair<std::size_t, std::size_t> choose_two_groups(const std::vector<LabelGroup>& groups,
                                                      const std::vector<std::string>& wanted, const std::string& file);

// True when examples/label_value holds a fraction or more than kMaxClassValues distinct values.
bool has_continuous_labels(const h5::File& file, std::size_t examples);

}  // namespace attnscan
