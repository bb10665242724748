#pragma once
// The colours of every attnscan figure, defined once: the C++ SVG writer uses them directly and the
// HTML report receives them in its data, so `plot` and `report` draw the same colours and scales.
#include <string>
#include <vector>

namespace attnscan::report {

// Diverging scale for mean scores: kDiverging[0] at the lowest value, the middle colour at the
// uniform-attention baseline, the last at the highest value.
extern const std::vector<std::string> kDiverging;
// One colour per head (cycled when a model has more heads).
extern const std::vector<std::string> kHeadColours;
// A heatmap cell without a defined value; token text of sentence A, of sentence B and of special
// tokens (head views); the rollout's lines.
extern const std::string kUndefinedCell, kSentenceAText, kSentenceBText, kSpecialTokenText, kRolloutLine;

// Position of `value` on the diverging scale in [-1, 1]: 0 at `baseline`, +-1 at the larger of the
// distances from the baseline to `lo` and to `hi` (symmetric, so equal distances get equal colour).
double diverging_position(double value, double lo, double baseline, double hi);
// "#rrggbb" for a position in [-1, 1], interpolated between the stops of kDiverging.
std::string diverging_colour(double position);

// The range a heatmap spans: its finite values, widened to include the baseline.
struct ColourDomain {
  double lo = 0, baseline = 0, hi = 1;
};
ColourDomain colour_domain(const std::vector<float>& values, double baseline);

}  // namespace attnscan::report
