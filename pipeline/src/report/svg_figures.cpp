#include "report/svg_figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/error.hpp"
#include "report/markup.hpp"
#include "report/palette.hpp"
#include "store/layer_maps.hpp"

namespace attnscan::report {


namespace {

std::string num(double v, const char* format = "%.9g") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

double mean_baseline(const HeadStats& s) {
  double sum = 0;
  int n = 0;
  for (float b : s.baseline_mean)
    if (std::isfinite(b)) sum += b, ++n;
  return n ? sum / n : NAN;
}

// Each layer's mean baseline over its heads (NaN where none is finite).
std::vector<double> layer_baselines(const HeadStats& s, int64_t L, int64_t H) {
  std::vector<double> out;
  for (int64_t l = 0; l < L; ++l) {
    double sum = 0;
    int n = 0;
    for (int64_t h = 0; h < H; ++h)
      if (const float b = s.baseline_mean[static_cast<std::size_t>(l * H + h)]; std::isfinite(b)) sum += b, ++n;
    out.push_back(n ? sum / n : NAN);
  }
  return out;
}

// Whether the layers have baselines of their own (sliding-window layers), not one shared by all.
bool baselines_differ(const std::vector<double>& per_layer) {
  double lo = INFINITY, hi = -INFINITY;
  for (double b : per_layer)
    if (std::isfinite(b)) lo = std::min(lo, b), hi = std::max(hi, b);
  return hi > lo + 1e-6 * std::max(1.0, std::fabs(hi));
}

std::string open_svg(double width, double height, const char* font = "sans-serif") {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) +
         "\" height=\"" + num(height) + "\" font-family=\"" + font + "\" font-size=\"11\">\n";
}

std::string text(double x, double y, const std::string& s, const std::string& extra = "") {
  return "<text x=\"" + num(x, "%.1f") + "\" y=\"" + num(y, "%.1f") + "\"" + (extra.empty() ? "" : " " + extra) + ">" +
         escape_markup(s) + "</text>\n";
}

}  // namespace

std::string heatmap_svg(const std::string& title, const HeadStats& s, int64_t L, int64_t H) {
  const double cw = 26, ch = 20, left = 58, top = 48;
  const double width = left + H * cw + 150, height = top + L * ch + 30;
  const std::vector<double> base = layer_baselines(s, L, H);
  const bool own_baselines = baselines_differ(base);  // then each row is white at its own layer's baseline
  std::vector<float> shown = s.mean;
  if (own_baselines)
    for (double b : base) shown.push_back(static_cast<float>(b));
  const ColourDomain d = colour_domain(shown, mean_baseline(s));
  std::string out = open_svg(width, height);
  out += text(4, 13, title, "font-weight=\"bold\"");
  out += text(left + H * cw / 2, 28, "head (0-indexed)", "text-anchor=\"middle\"");
  const double mid = top + L * ch / 2;
  out += text(12, mid, "layer (0-indexed)", "text-anchor=\"middle\" transform=\"rotate(-90 12 " + num(mid, "%.1f") + ")\"");
  for (int64_t h = 0; h < H; ++h) out += text(left + h * cw + cw / 2, top - 3, std::to_string(h), "text-anchor=\"middle\"");
  for (int64_t l = 0; l < L; ++l) out += text(left - 5, top + l * ch + ch / 2 + 4, std::to_string(l), "text-anchor=\"end\"");
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < H; ++h) {
      const float v = s.mean[static_cast<std::size_t>(l * H + h)];
      const double white = own_baselines && std::isfinite(base[static_cast<std::size_t>(l)]) ? base[static_cast<std::size_t>(l)] : d.baseline;
      const std::string fill = std::isfinite(v) ? diverging_colour(diverging_position(v, d.lo, white, d.hi)) : kUndefinedCell;
      out += "<rect class=\"cell\" x=\"" + num(left + h * cw) + "\" y=\"" + num(top + l * ch) + "\" width=\"" + num(cw - 1) +
             "\" height=\"" + num(ch - 1) + "\" fill=\"" + fill + "\" data-layer=\"" + std::to_string(l) + "\" data-head=\"" +
             std::to_string(h) + "\" data-value=\"" + (std::isfinite(v) ? num(v) : "nan") + "\"><title>layer " +
             std::to_string(l) + ", head " + std::to_string(h) + ": mean " + num(v, "%.4f") + "</title></rect>\n";
    }
  const double bx = left + H * cw + 16, by = top, bh = L * ch;
  constexpr int kSteps = 40;
  for (int i = 0; i < kSteps; ++i) {
    const double v = d.hi - (i + 0.5) / kSteps * (d.hi - d.lo);
    out += "<rect x=\"" + num(bx) + "\" y=\"" + num(by + i * bh / kSteps, "%.2f") + "\" width=\"14\" height=\"" +
           num(bh / kSteps + 0.5, "%.2f") + "\" fill=\"" + diverging_colour(diverging_position(v, d.lo, d.baseline, d.hi)) +
           "\"/>\n";
  }
  auto y_of = [&](double v) { return by + (d.hi == d.lo ? bh / 2 : (d.hi - v) / (d.hi - d.lo) * bh); };
  out += text(bx + 18, by + 8, num(d.hi, "%.3f"));
  out += text(bx + 18, by + bh, num(d.lo, "%.3f"));
  out += "<line class=\"baseline-mark\" x1=\"" + num(bx - 3) + "\" x2=\"" + num(bx + 17) + "\" y1=\"" + num(y_of(d.baseline), "%.2f") +
         "\" y2=\"" + num(y_of(d.baseline), "%.2f") + "\" stroke=\"#000\" stroke-width=\"2\"/>\n";
  const double label_y = std::min(by + bh - 14, std::max(by + 20, y_of(d.baseline) + 4));  // clear of the hi / lo labels
  out += text(bx + 18, label_y, "baseline " + num(d.baseline, "%.3f"), "font-weight=\"bold\"");
  if (own_baselines) out += text(bx - 3, by + bh + 16, "white: each layer's own");  // below the bar
  return out + "</svg>\n";
}

std::string per_layer_svg(const std::string& title, const HeadStats& s, int64_t L, int64_t H) {
  // 48 px a layer, at most 1040 in all (as the report's view): the heads' spread and the labels thin out with it
  const double left = 56, top = 28, pw = std::max<double>(220, std::min<double>(L * 48, 1040)), ph = 190;
  const double spread = std::min(24.0, 0.7 * pw / L);
  const auto label_every = static_cast<int64_t>(std::ceil(20 / (pw / L)));
  const std::vector<double> base = layer_baselines(s, L, H);
  const bool own_baselines = baselines_differ(base);
  std::vector<float> shown = s.mean;  // the axis spans the means and every baseline drawn
  for (double b : base) shown.push_back(static_cast<float>(b));
  const ColourDomain d = colour_domain(shown, mean_baseline(s));
  auto x = [&](double l) { return left + (l + 0.5) / L * pw; };
  auto y = [&](double v) { return top + (d.hi == d.lo ? ph / 2 : (d.hi - v) / (d.hi - d.lo) * ph); };
  std::string out = open_svg(left + pw + 20, top + ph + 40);
  out += text(4, 13, title, "font-weight=\"bold\"");
  out += "<line x1=\"" + num(left) + "\" x2=\"" + num(left) + "\" y1=\"" + num(top) + "\" y2=\"" + num(top + ph) + "\" stroke=\"#444\"/>\n";
  out += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(top + ph) + "\" y2=\"" + num(top + ph) + "\" stroke=\"#444\"/>\n";
  for (double v : {d.lo, d.hi}) out += text(left - 4, y(v) + 4, num(v, "%.3f"), "text-anchor=\"end\"");
  out += text(12, top + ph / 2, "mean score", "text-anchor=\"middle\" transform=\"rotate(-90 12 " + num(top + ph / 2, "%.1f") + ")\"");
  if (!own_baselines) {
    out += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(y(d.baseline), "%.2f") + "\" y2=\"" +
           num(y(d.baseline), "%.2f") + "\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n";
    out += text(left + pw, y(d.baseline) - 3, "uniform baseline", "text-anchor=\"end\" fill=\"#666\"");
  } else {  // a dashed step per layer at that layer's own baseline (sliding-window layers see fewer keys)
    for (int64_t l = 0; l < L; ++l) {
      const double b = base[static_cast<std::size_t>(l)];
      if (!std::isfinite(b)) continue;
      out += "<line class=\"layer-baseline\" data-layer=\"" + std::to_string(l) + "\" data-value=\"" + num(b) + "\" x1=\"" +
             num(x(l - 0.5), "%.2f") + "\" x2=\"" + num(x(l + 0.5), "%.2f") + "\" y1=\"" + num(y(b), "%.2f") + "\" y2=\"" +
             num(y(b), "%.2f") + "\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n";
    }
    out += text(left + pw, top + 10, "uniform baseline: each layer's own", "text-anchor=\"end\" fill=\"#666\"");
  }
  std::string means;
  for (int64_t l = 0; l < L; ++l) {
    if (l % label_every == 0) out += text(x(l), top + ph + 14, std::to_string(l), "text-anchor=\"middle\"");
    double sum = 0;
    int n = 0;
    for (int64_t h = 0; h < H; ++h) {
      const float v = s.mean[static_cast<std::size_t>(l * H + h)];
      if (!std::isfinite(v)) continue;
      sum += v, ++n;
      out += "<circle class=\"point\" cx=\"" + num(x(l) + (h - (H - 1) / 2.0) / H * spread, "%.2f") + "\" cy=\"" + num(y(v), "%.2f") +
             "\" r=\"3\" fill=\"" + kHeadColours[static_cast<std::size_t>(h) % kHeadColours.size()] +
             "\" fill-opacity=\"0.8\" data-layer=\"" + std::to_string(l) + "\" data-head=\"" + std::to_string(h) +
             "\" data-value=\"" + num(v) + "\"/>\n";
    }
    if (n) means += num(x(l), "%.2f") + "," + num(y(sum / n), "%.2f") + " ";
  }
  out += "<polyline class=\"layer-mean\" points=\"" + means + "\" fill=\"none\" stroke=\"#111\" stroke-width=\"2\"/>\n";
  out += text(left + pw / 2, top + ph + 30, "layer (0-indexed); points: heads, line: layer mean", "text-anchor=\"middle\"");
  return out + "</svg>\n";
}

namespace {

// Lines from the tokens on the left (rows of `map`, [n][n]) to those on the right (columns); as in the
// report, opacity is the value relative to the map's strongest, so long pairs stay visible.
std::string lines_view_svg(const ExampleView& e, const std::string& title, const float* map, const std::string& colour,
                           double min_weight) {
  const std::size_t n = e.tokens.size();
  std::size_t longest = 0;
  for (const auto& t : e.tokens) longest = std::max(longest, t.size());
  const double row = 16, col = std::max<double>(90, 8.0 * static_cast<double>(longest) + 12), gap = 170;
  const double xl = 6 + col, xr = xl + gap;
  // Wide enough for the title too (about 7 px per character of 12 px sans-serif).
  const double width = std::max(col * 2 + gap + 20, 7.0 * static_cast<double>(title.size()) + 8);
  std::string out = open_svg(width, static_cast<double>(n) * row + 30, "monospace");
  out += text(4, 12, title, "font-family=\"sans-serif\" fill=\"#444\"");
  const float strongest = n > 0 ? *std::max_element(map, map + n * n) : 0.0f;
  const float scale = strongest > 0 ? 1.0f / strongest : 1.0f;
  for (std::size_t q = 0; q < n; ++q)
    for (std::size_t k = 0; k < n; ++k) {
      const float w = map[q * n + k];
      if (w < min_weight || w <= 0) continue;
      out += "<line class=\"att\" x1=\"" + num(xl) + "\" y1=\"" + num(24 + q * row) + "\" x2=\"" + num(xr) + "\" y2=\"" +
             num(24 + k * row) + "\" stroke=\"" + colour + "\" stroke-opacity=\"" + num(std::min(1.0f, w * scale), "%.3f") +
             "\" stroke-width=\"2\" data-q=\"" + std::to_string(q) + "\" data-k=\"" + std::to_string(k) + "\" data-w=\"" +
             num(w, "%.4f") + "\"/>\n";
    }
  for (std::size_t i = 0; i < n; ++i) {
    const std::string style = e.special[i]   ? "font-weight=\"bold\" fill=\"" + kSpecialTokenText + "\""
                              : e.segment[i] ? "fill=\"" + kSentenceBText + "\""
                                             : "fill=\"" + kSentenceAText + "\"";
    out += text(xl - 4, 28 + static_cast<double>(i) * row, e.tokens[i], "text-anchor=\"end\" " + style);
    out += text(xr + 4, 28 + static_cast<double>(i) * row, e.tokens[i], style);
  }
  return out + "</svg>\n";
}

}  // namespace

std::string head_view_svg(const ExampleView& e, const ResultFile& file, int64_t layer, int64_t head, double min_weight) {
  const std::size_t n = e.tokens.size(), heads = file.params().heads.size();
  const auto li = static_cast<std::size_t>(file.stored_layer(layer)), hi = static_cast<std::size_t>(file.stored_head(head));
  return lines_view_svg(e, "example " + e.id + ": layer " + std::to_string(layer) + ", head " + std::to_string(head) + " (0-indexed)",
                        e.attention.data() + (li * heads + hi) * n * n,
                        kHeadColours[static_cast<std::size_t>(head) % kHeadColours.size()], min_weight);
}

std::string layer_map_view_svg(const ExampleView& e, const ResultFile& file, const std::string& map, int64_t layer,
                               double min_weight) {
  const LayerMapDataset* m = find_layer_map(map);
  if (!m || !file.params().stores(map))
    throw Error(file.path().string() + ": no " + map + " stored (" + (m ? m->option : "not a layer map") + " of the run)");
  const std::size_t n = e.tokens.size();
  const uint64_t start = file.reader().layer_map_start(e.position) + static_cast<uint64_t>(layer) * n * n;
  const auto values = file.reader().file().read_rows(m->dataset, static_cast<std::size_t>(start), static_cast<std::size_t>(start + n * n));
  return lines_view_svg(e, "example " + e.id + ": layer " + std::to_string(layer) + " (0-indexed), " + m->what, values.data(),
                        kRolloutLine, min_weight);
}

}  // namespace attnscan::report
