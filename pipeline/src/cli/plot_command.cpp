// `attnscan plot RESULT.h5 -o DIR`: SVG figures for papers, without a browser.
#include <algorithm>
#include <boost/program_options.hpp>
#include <iostream>

#include "common/error.hpp"
#include "cli/commands.hpp"
#include "cli/positional.hpp"
#include "report/html_page.hpp"
#include "report/svg_figures.hpp"
#include "store/layer_maps.hpp"

namespace po = boost::program_options;

namespace attnscan::cli {

namespace {

std::string file_safe(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return s;
}

}  // namespace

int plot_command(const std::vector<std::string>& args) {
  std::string file, dir, only, example, map = "weights";
  int64_t layer = -1, head = -1;
  double min_weight = 0.01;
  po::options_description opts("attnscan plot RESULT.h5 -o DIR: SVG figures (heatmaps, per-layer views, a head view)");
  opts.add_options()("help,h", "show this help")("output,o", po::value(&dir), "folder for the SVG files")(
      "detector", po::value(&only), "only this detector output (detector or detector/output)")(
      "example", po::value(&example), "with --layer and --head: the head view of this example id")(
      "layer", po::value(&layer), "layer of the head view (0-indexed)")("head", po::value(&head), "head of the head view (0-indexed)")(
      "map", po::value(&map)->default_value("weights"),
      "head view of: weights, or a layer map the file stores (rollout, value_zeroing, alti, alti_rollout; no --head)")(
      "min-weight", po::value(&min_weight)->default_value(0.01), "head view: omit lines below this weight");
  std::vector<std::string> files;
  const auto vm = parse_with_files(args, opts, files, 1);
  if (!files.empty()) file = files[0];
  if (vm.count("help")) {
    std::cout << opts << "\nColours and scales are those of `attnscan report`. Layers and heads are 0-indexed.\n";
    return 0;
  }
  if (file.empty() || dir.empty()) throw Error("usage: attnscan plot RESULT.h5 -o DIR [--example ID --layer L --head H]");
  const analysis::ResultFile result(file);
  const auto& p = result.params();
  std::vector<ScoreOutput> outputs = p.scores;
  if (!only.empty()) outputs = {result.output(only)};
  std::vector<std::filesystem::path> written;
  auto write = [&](const std::string& name, const std::string& svg) {
    const auto path = std::filesystem::path(dir) / name;
    report::write_file_atomically(path, svg);
    written.push_back(path);
  };
  if (map != "weights") {
    if (!find_layer_map(map)) {
      std::string names;
      for (const auto& m : kLayerMaps) names += std::string(", ") + m.name;
      throw Error("--map " + map + ": expected weights" + names);
    }
    if (example.empty() || layer < 0 || head >= 0) throw Error("--map " + map + " draws a layer: give --example ID and --layer L (no --head)");
    if (layer >= p.model_layers)
      throw Error("--layer " + std::to_string(layer) + ": the model has " + std::to_string(p.model_layers) + " layers (0-indexed)");
    const auto view = result.example(result.find_example(example));
    write("mapview-" + file_safe(example) + "-L" + std::to_string(layer) + "-" + map + ".svg",
          report::layer_map_view_svg(view, result, map, layer, min_weight));
  } else if (!example.empty() || layer >= 0 || head >= 0) {
    if (example.empty() || layer < 0 || head < 0) throw Error("a head view needs --example ID, --layer L and --head H");
    if (layer >= p.model_layers || head >= p.model_heads)
      throw Error("--layer " + std::to_string(layer) + " --head " + std::to_string(head) + ": the model has " +
                  std::to_string(p.model_layers) + " layers and " + std::to_string(p.model_heads) + " heads (0-indexed)");
    if (result.stored_layer(layer) < 0 || result.stored_head(head) < 0)
      throw Error(file + ": layer " + std::to_string(layer) + " / head " + std::to_string(head) +
                  " was not stored (output.layers / output.heads of the run)");
    const auto view = result.example(result.find_example(example));
    if (view.attention.empty())
      throw Error(file + ": example " + example + " has no stored attention (output.attention_every of the run); pick "
                         "one whose examples/attention_offset is >= 0");
    write("headview-" + file_safe(example) + "-L" + std::to_string(layer) + "-H" + std::to_string(head) + ".svg",
          report::head_view_svg(view, result, layer, head, min_weight));
  } else {
    for (const auto& so : outputs) {
      const HeadStats stats = result.stats(so);
      if (std::all_of(stats.count.begin(), stats.count.end(), [](float c) { return !(c > 0); })) {
        // No head has a score (next_token on a causal model, NaN by design): a figure of nothing would read as
        // numbers, so a line says why there is none.
        std::cout << so.key() << ": undefined on every example (every score NaN), no figure\n";
        continue;
      }
      const std::string base = file_safe(so.detector) + "-" + file_safe(so.output);
      write(base + "-heatmap.svg", report::heatmap_svg(so.key() + ": mean score", stats, p.model_layers, p.model_heads));
      write(base + "-per-layer.svg", report::per_layer_svg(so.key() + ": per layer", stats, p.model_layers, p.model_heads));
    }
  }
  for (const auto& w : written) std::cout << w.string() << "\n";
  return 0;
}

}  // namespace attnscan::cli
