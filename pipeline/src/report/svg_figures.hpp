#pragma once
// Vector figures for papers, written in C++ (no browser): the same layouts, colours and scales as
// the HTML report (report/palette.hpp).
#include <string>

#include "analysis/result_file.hpp"

namespace attnscan::report {

using analysis::ExampleView;
using analysis::ResultFile;

// L x H heatmap of the mean score with axis labels and a colour bar marked at the uniform baseline.
// Every cell is a <rect class="cell"> with data-layer, data-head and data-value (the mean, %.9g).
std::string heatmap_svg(const std::string& title, const HeadStats& stats, int64_t layers, int64_t heads);
// Clark et al. 2019 style: one point per head, layer on the x axis, the layer mean drawn through.
std::string per_layer_svg(const std::string& title, const HeadStats& stats, int64_t layers, int64_t heads);
// BertViz-style head view of one example, one layer and head: attending tokens on the left,
// attended tokens on the right, line opacity = attention weight (weights below `min_weight` omitted).
std::string head_view_svg(const ExampleView& example, const ResultFile& file, int64_t layer, int64_t head,
                          double min_weight = 0.01);
// The same for one of the file's layer maps (store/layer_maps.hpp: rollout, value_zeroing, alti,
// alti_rollout) of a model layer: receiving tokens on the left, line opacity = the map's value.
std::string layer_map_view_svg(const ExampleView& example, const ResultFile& file, const std::string& map,
                               int64_t layer, double min_weight = 0.01);

}  // namespace attnscan::report
