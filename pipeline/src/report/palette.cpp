#include "report/palette.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnscan::report {

const std::vector<std::string> kDiverging = {"#2166ac", "#67a9cf", "#f7f7f7", "#ef8a62", "#b2182b"};
const std::vector<std::string> kHeadColours = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                               "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939",
                                               "#8c6d31", "#843c39", "#7b4173", "#3182bd"};

const std::string kUndefinedCell = "#dddddd", kSentenceAText = "#222222", kSentenceBText = "#114a7a",
                  kSpecialTokenText = "#8a1c7c", kRolloutLine = "#333333";

double diverging_position(double v, double lo, double baseline, double hi) {
  // One unit of score is one step of colour on both sides, so a head below the baseline is as pale or
  // as strong as its distance from the baseline, not saturated because the range below is short.
  const double extent = std::max(hi - baseline, baseline - lo);
  if (std::isnan(v) || !(extent > 0)) return 0;
  return std::clamp((v - baseline) / extent, -1.0, 1.0);
}

std::string diverging_colour(double position) {
  const double x = (std::clamp(position, -1.0, 1.0) + 1) / 2 * static_cast<double>(kDiverging.size() - 1);
  const std::size_t i = std::min(static_cast<std::size_t>(x), kDiverging.size() - 2);
  const double f = x - static_cast<double>(i);
  auto channel = [&](int c) {
    const int a = std::stoi(kDiverging[i].substr(1 + 2 * c, 2), nullptr, 16);
    const int b = std::stoi(kDiverging[i + 1].substr(1 + 2 * c, 2), nullptr, 16);
    return static_cast<int>(std::lround(a + (b - a) * f));
  };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", channel(0), channel(1), channel(2));
  return buf;
}

ColourDomain colour_domain(const std::vector<float>& values, double baseline) {
  ColourDomain d{INFINITY, baseline, -INFINITY};
  for (float v : values)
    if (std::isfinite(v)) d.lo = std::min(d.lo, double(v)), d.hi = std::max(d.hi, double(v));
  if (d.lo > d.hi) d.lo = d.hi = 0;  // nothing defined
  if (std::isfinite(baseline)) d.lo = std::min(d.lo, baseline), d.hi = std::max(d.hi, baseline);
  else d.baseline = (d.lo + d.hi) / 2;
  return d;
}

}  // namespace attnscan::report
