#include "analysis/label_groups.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "common/error.hpp"

namespace attnscan {

namespace {

std::string bin_name(double lo, double hi, bool last) {
  std::ostringstream s;
  s << "[" << lo << ", " << hi << (last ? "]" : ")");
  return s.str();
}

}  // namespace

bool has_continuous_labels(const h5::File& file, std::size_t examples) {
  std::set<double> distinct;
  for (double v : file.read<double>("examples/label_value", 0, examples)) {
    if (std::isnan(v)) continue;
    if (v != std::floor(v)) return true;
    distinct.insert(v);
  }
  return distinct.size() > kMaxClassValues;
}

std::vector<LabelGroup> label_groups(const h5::File& file, std::size_t examples, int bins) {
  const auto has = file.read<uint8_t>("examples/has_label", 0, examples);
  std::vector<LabelGroup> out;
  if (has_continuous_labels(file, examples)) {
    const auto values = file.read<double>("examples/label_value", 0, examples);
    if (bins <= 0) {
      std::map<double, int> distinct;
      for (double v : values)
        if (!std::isnan(v)) distinct[v]++;
      throw Error(file.path().string() + ": the label is a continuous number (" + std::to_string(distinct.size()) +
                  " distinct values), so grouping by its values would make one group per value. Pass --bins K for K "
                  "equal-width bins, or correlate the per-example scores with examples/label_value (see docs/hdf5-layout.md)");
    }
    double lo = INFINITY, hi = -INFINITY;
    for (double v : values)
      if (!std::isnan(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    const double width = hi > lo ? (hi - lo) / bins : 1.0;
    out.resize(static_cast<std::size_t>(bins));
    for (int b = 0; b < bins; ++b) {
      out[b].name = bin_name(lo + b * width, b + 1 == bins ? hi : lo + (b + 1) * width, b + 1 == bins);
      out[b].mask.assign(examples, 0);
    }
    for (std::size_t i = 0; i < examples; ++i) {
      if (std::isnan(values[i])) continue;
      const int b = std::min(bins - 1, static_cast<int>(std::floor((values[i] - lo) / width)));
      out[b].mask[i] = 1;
      out[b].size++;
    }
    return out;
  }
  const auto labels = file.read_strings("examples/label", 0, examples);
  std::map<std::string, std::size_t> index;  // label -> group, groups in sorted label order
  for (std::size_t i = 0; i < examples; ++i)
    if (has[i]) index.emplace(labels[i], 0);
  for (auto& [label, k] : index) {
    k = out.size();
    out.push_back({label, std::vector<uint8_t>(examples, 0), 0});
  }
  for (std::size_t i = 0; i < examples; ++i) {
    if (!has[i]) continue;
    auto& g = out[index[labels[i]]];
    g.mask[i] = 1;
    g.size++;
  }
  return out;
}

std::pair<std::size_t, std::size_t> choose_two_groups(const std::vector<LabelGroup>& groups,
                                                      const std::vector<std::string>& wanted, const std::string& file) {
  if (!wanted.empty()) {
    auto find = [&](const std::string& name) {
      for (std::size_t i = 0; i < groups.size(); ++i)
        if (groups[i].name == name) return i;
      std::string list;
      for (const auto& g : groups) list += (list.empty() ? "" : ", ") + g.name;
      throw Error(file + ": --groups: no label '" + name + "' (labels: " + list + ")");
    };
    return {find(wanted.at(0)), find(wanted.at(1))};
  }
  std::vector<std::size_t> order(groups.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return groups[x].size > groups[y].size; });
  return {std::max(order[0], order[1]), std::min(order[0], order[1])};
}

}  // namespace attnscan
