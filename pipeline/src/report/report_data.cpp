#include "report/report_data.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/compare.hpp"
#include "analysis/head_ranking.hpp"
#include "analysis/label_groups.hpp"
#include "analysis/relation_heads.hpp"
#include "common/error.hpp"
#include "tokenizer/tokenizer.hpp"
#include "plugin_host/attention_maps.hpp"
#include "report/palette.hpp"
#include "store/offset_baselines.hpp"

namespace attnscan::report {

using analysis::ScoredExample;
using analysis::top_examples;

using nlohmann::json;

namespace {

// NaN becomes null in JSON.
json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

// The same for every value; floats kept as they are in the file.
json numbers(const std::vector<float>& v) {
  json a = json::array();
  for (float x : v) a.push_back(std::isfinite(x) ? json(x) : json(nullptr));  // a float stays a float
  return a;
}

double mean_of_finite(const std::vector<float>& v) {
  double s = 0;
  std::size_t n = 0;
  for (float x : v)
    if (std::isfinite(x)) s += x, ++n;
  return n ? s / static_cast<double>(n) : NAN;
}

json stats_json(const HeadStats& s) {
  std::vector<float> lift(s.mean.size(), NAN);
  for (std::size_t k = 0; k < lift.size(); ++k)
    if (s.baseline_mean[k] != 0) lift[k] = s.mean[k] / s.baseline_mean[k];
  return {{"mean", numbers(s.mean)},       {"ci_low", numbers(s.ci_low)}, {"ci_high", numbers(s.ci_high)},
          {"count", numbers(s.count)},     {"baseline", numbers(s.baseline_mean)}, {"lift", numbers(lift)},
          {"baseline_overall", mean_of_finite(s.baseline_mean)}};
}

// The tokens as a person reads them ("Ġst" -> "▁st", "Ã©" -> "é"); the raw ones stay in "tokens".
std::vector<std::string> readable_tokens(const ResultFile& file, const std::vector<std::string>& tokens) {
  const SubwordKind kind = subword_kind_named(file.root().subword_kind).value_or(SubwordKind::WordPiece);
  std::vector<std::string> out;
  for (const auto& t : tokens) out.push_back(readable_token(t, kind));
  return out;
}

// The example's norm-weighted attention (Kobayashi et al. 2020: alpha_ij * ||f_h(x_j)||, each row
// normalised to sum 1, the map that `map: norm` detectors score) of the stored layers and heads,
// computed from the stored attention and tokens/value_norm, one byte per value as the attention.
std::string encode_norm_weighted(const ResultFile& file, const ExampleView& e) {
  const auto& f = file.reader().file();
  const auto& p = file.params();
  const std::size_t t = e.token_offset, n = e.tokens.size();
  const auto rows = f.read_rows(kValueNorms, t, t + n);  // [n][model layers][model heads]
  std::vector<float> norms;  // [stored layer][stored head][n]
  norms.reserve(p.layers.size() * p.heads.size() * n);
  for (int64_t l : p.layers)
    for (int64_t h : p.heads)
      for (std::size_t j = 0; j < n; ++j)
        norms.push_back(rows[(j * static_cast<std::size_t>(p.model_layers) + static_cast<std::size_t>(l)) *
                                 static_cast<std::size_t>(p.model_heads) + static_cast<std::size_t>(h)]);
  const auto weighted = norm_weighted_attention(e.attention.data(), norms.data(), static_cast<int64_t>(p.layers.size()),
                                                static_cast<int64_t>(p.heads.size()), n);
  return encode_attention(weighted);
}

// One of the example's layer maps (kLayerMaps: rollout, value zeroing, ALTI) over every model layer,
// [layer][receiving token][token], one byte per value as the attention.
std::string encode_layer_map(const ResultFile& file, const ExampleView& e, const char* name) {
  const std::size_t n = e.tokens.size(), count = static_cast<std::size_t>(file.params().model_layers) * n * n;
  const uint64_t start = file.reader().layer_map_start(e.position);
  return encode_attention(file.reader().file().read_rows(find_layer_map(name)->dataset, static_cast<std::size_t>(start),
                                                         static_cast<std::size_t>(start + count)));
}

// Every layer map the file stores, by name.
json example_layer_maps(const ResultFile& file, const ExampleView& e) {
  json out = json::object();
  for (const auto& name : file.params().layer_maps) out[name] = encode_layer_map(file, e, name.c_str());
  return out;
}

// The gold tree of an example of a file with trees: per token, its word in the sentence, the word of
// its head (-1 root, -2 template specials) and the relation, as tokens/* stores them.
json example_tree(const ResultFile& file, const ExampleView& e) {
  const auto& f = file.reader().file();
  const std::size_t t = e.token_offset, n = e.tokens.size();
  return {{"word_index", f.read<int32_t>("tokens/word_index", t, t + n)}, {"head", f.read<int32_t>(kDepHead, t, t + n)},
          {"relation", f.read_strings(kDepRelation, t, t + n)}};
}

json example_json(const ResultFile& file, const ExampleView& e) {
  const auto& p = file.params();
  const bool attention = !e.attention.empty();
  return {{"position", e.position}, {"id", e.id},         {"sentence_a", e.sentence_a}, {"sentence_b", e.sentence_b},
          {"label", e.label},       {"tokens", e.tokens}, {"readable", readable_tokens(file, e.tokens)},
          {"segment", e.segment},   {"special", e.special},
          {"attention", attention ? json(encode_attention(e.attention)) : json(nullptr)},
          // Precomputed here from full-precision weights (docs/report.md says why).
          {"norm_weighted", attention && p.value_norms ? json(encode_norm_weighted(file, e)) : json(nullptr)},
          {"layer_maps", example_layer_maps(file, e)},
          {"tree", p.trees ? example_tree(file, e) : json(nullptr)},
          {"layers", p.layers}, {"heads", p.heads}};
}

// The label groups of the page, or a note saying why there are none.
std::vector<LabelGroup> page_groups(const ResultFile& file, const ReportOptions& o, std::string& note) {
  const auto has = file.reader().file().read<uint8_t>("examples/has_label", 0, file.examples());
  if (std::find(has.begin(), has.end(), 1) == has.end()) {
    if (o.by_label) throw Error(file.path().string() + ": --by label, but the file has no labels (set dataset.label in the run)");
    note = "The file has no labels (dataset.label was not set), so there are no label groups.";
    return {};
  }
  if (has_continuous_labels(file.reader().file(), file.examples()) && o.bins <= 0) {
    note = "The label is a continuous number: rerun the report with --bins K to compare K equal-width bins.";
    return {};
  }
  auto groups = label_groups(file.reader().file(), file.examples(), o.bins);
  groups.erase(std::remove_if(groups.begin(), groups.end(), [](const LabelGroup& g) { return g.size == 0; }), groups.end());
  return groups;
}

// The two groups of the difference heatmap A - B (-1, -1 with fewer than two groups).
std::pair<int, int> difference_pair(const std::vector<LabelGroup>& groups, const ReportOptions& o, const ResultFile& file) {
  if (groups.size() < 2) return {-1, -1};
  const auto [a, b] = choose_two_groups(groups, o.groups, file.path().string());
  return {static_cast<int>(a), static_cast<int>(b)};
}

// Per output key: q (and the test's numbers) of every (layer, head) of `c`, as [L*H] arrays of the page.
json significance(const analysis::Comparison& c, int64_t layers, int64_t heads) {
  json out = json::object();
  for (const auto& r : c.rows) {
    const std::string key = r.detector + "/" + r.output;
    if (!out.contains(key))
      for (const char* f : {"effect", "ci_low", "ci_high", "p", "q"}) out[key][f] = json(std::vector<json>(static_cast<std::size_t>(layers * heads)));
    const std::size_t k = static_cast<std::size_t>(r.layer * heads + r.head);
    if (r.layer >= layers || r.head >= heads) continue;
    out[key]["effect"][k] = number(r.test.effect);
    out[key]["ci_low"][k] = number(r.test.ci_low);
    out[key]["ci_high"][k] = number(r.test.ci_high);
    out[key]["p"][k] = number(r.test.p);
    out[key]["q"][k] = number(r.q);
  }
  return out;
}

// The 2-D embedding of `attnscan similarity`, when the file holds one.
json similarity_points(const ResultFile& file) {
  const auto& f = file.reader().file();
  if (!f.exists("analysis/head_similarity/mds")) return nullptr;
  const auto mds = f.read_rows("analysis/head_similarity/mds", 0, f.dims("analysis/head_similarity/mds")[0]);
  const std::size_t k = mds.size() / 2;
  const auto layer = f.read_rows("analysis/head_similarity/layer", 0, k), head = f.read_rows("analysis/head_similarity/head", 0, k);
  json points = json::array();
  for (std::size_t i = 0; i < k; ++i) points.push_back({mds[2 * i], mds[2 * i + 1], layer[i], head[i]});
  return {{"points", points}, {"method", f.attr_string("/analysis/head_similarity", "method")},
          {"mds_method", f.attr_string("/analysis/head_similarity", "mds_method")}};
}

// Clark et al.'s syntax heads (analysis/relation_heads.hpp) with their best examples, which join
// the page's examples; null for files without dependency scores.
json syntax_heads(const ResultFile& file, const ReportOptions& o, std::map<std::size_t, json>& shown) {
  const auto& scores = file.params().scores;
  if (!file.params().trees || std::none_of(scores.begin(), scores.end(), is_dependency_output)) return nullptr;
  json rows = json::array();
  for (const auto& r : analysis::relation_heads(file, o.min_words, o.examples)) {
    json ex = json::array();
    for (const auto& [correct, pos] : r.examples) {
      if (!shown.count(pos)) shown[pos] = example_json(file, file.example(pos));
      ex.push_back({{"position", pos}, {"correct", correct}});
    }
    rows.push_back({{"detector", r.detector}, {"relation", r.relation}, {"direction", r.direction}, {"words", r.words},
                    {"layer", r.layer}, {"head", r.head}, {"accuracy", number(r.accuracy)}, {"best_offset", r.best_offset},
                    {"baseline", number(r.baseline)}, {"examples", ex}});
  }
  const auto outputs = std::count_if(scores.begin(), scores.end(), is_dependency_output);
  return {{"min_words", o.min_words}, {"outputs", outputs}, {"rows", rows}};
}

}  // namespace

std::string encode_attention(const std::vector<float>& attention) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<uint8_t> bytes(attention.size());
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(std::lround(std::clamp(attention[i], 0.0f, 1.0f) * 255.0f));
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t b = (uint32_t(bytes[i]) << 16) | (i + 1 < bytes.size() ? uint32_t(bytes[i + 1]) << 8 : 0) |
                       (i + 2 < bytes.size() ? uint32_t(bytes[i + 2]) : 0);
    out += kAlphabet[(b >> 18) & 63];
    out += kAlphabet[(b >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(b >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[b & 63] : '=';
  }
  return out;
}

json report_data(const ResultFile& file, const ReportOptions& o) {
  const auto& p = file.params();
  const auto& root = file.root();
  json data = {
      {"file", file.path().string()},
      {"tool_version", file.reader().file().has_attr("/", "tool_version") ? file.reader().file().attr_string("/", "tool_version") : ""},
      {"model", {{"dir", root.model_dir}, {"layers", p.model_layers}, {"heads", p.model_heads}, {"config", root.model_config_json}}},
      {"dataset", root.dataset},
      {"counts", {{"rows_read", root.rows_read}, {"written", root.examples_written}, {"skipped", root.rows_skipped},
                  {"truncated", root.examples_truncated}, {"with_attention", file.examples_with_attention()}}},
      {"config", root.config_yaml},
      // key_ranges: per stored layer (before, after), flat; empty where every query sees every key. The page
      // draws the attention outside them as structural zeros and says the model is causal or windowed.
      {"stored", {{"layers", p.layers}, {"heads", p.heads}, {"dtype", dtype_name(p.dtype)},
                  {"value_norms", p.value_norms}, {"layer_maps", p.layer_maps}, {"key_ranges", p.key_ranges}}},
      {"palette", {{"diverging", kDiverging}, {"heads", kHeadColours}, {"undefined", kUndefinedCell},
                   {"sentence_a", kSentenceAText}, {"sentence_b", kSentenceBText}, {"special", kSpecialTokenText},
                   {"rollout", kRolloutLine}}},
      {"options", {{"top", o.top}, {"examples", o.examples}}},
  };
  std::string label_note;
  const auto groups = page_groups(file, o, label_note);
  const auto [ga, gb] = difference_pair(groups, o, file);
  data["labels"] = {{"note", label_note}, {"groups", json::array()}, {"difference", ga < 0 ? json(nullptr) : json({groups[ga].name, groups[gb].name})}};
  for (const auto& g : groups) data["labels"]["groups"].push_back({{"name", g.name}, {"size", g.size}});
  analysis::CompareOptions tests;
  tests.resamples = 0;  // the page marks heads by the t-test's BH q; permutations are `attnscan compare`'s
  if (ga >= 0 && o.bins <= 0) {  // Welch per head for the two groups of the difference heatmaps
    tests.groups = {groups[ga].name, groups[gb].name};
    const auto c = analysis::compare_label_groups(file, tests);
    data["labels"]["tests"] = significance(c, p.model_layers, p.model_heads);
    data["labels"]["method"] = c.method;
  }
  if (!o.compare.empty()) {
    const ResultFile other(o.compare);
    const auto c = analysis::compare_files(file, other, tests);
    data["comparison"] = {{"a", c.a}, {"b", c.b}, {"method", c.method}, {"heads_note", c.heads_note},
                          {"tests", significance(c, p.model_layers, p.model_heads)}};
  }
  data["similarity"] = similarity_points(file);

  std::map<std::size_t, json> shown;  // examples on the page, by position
  data["syntax"] = syntax_heads(file, o, shown);
  json outputs = json::array();
  for (const auto& so : p.scores) {
    if (!data["syntax"].is_null() && is_dependency_output(so)) continue;  // its own section, one row per output
    const HeadStats all = file.stats(so);
    const auto order = rank_heads(all.mean);
    std::vector<std::size_t> top(order.begin(), order.begin() + static_cast<long>(std::min(o.top, order.size())));
    const auto examples = top_examples(file, so, top, o.examples);
    json tops = json::array();
    for (std::size_t r = 0; r < top.size(); ++r) {
      const int64_t layer = static_cast<int64_t>(top[r]) / p.model_heads, head = static_cast<int64_t>(top[r]) % p.model_heads;
      const bool stored = file.stored_layer(layer) >= 0 && file.stored_head(head) >= 0;
      json ex = json::array();
      for (const auto& [score, pos] : stored ? examples[r] : std::vector<ScoredExample>{}) {
        if (!shown.count(pos)) shown[pos] = example_json(file, file.example(pos));
        ex.push_back({{"position", pos}, {"score", score}});
      }
      tops.push_back({{"rank", r + 1}, {"layer", layer}, {"head", head}, {"stored", stored}, {"examples", ex}});
    }
    json by_group = json::array();
    for (const auto& g : groups) by_group.push_back({{"name", g.name}, {"stats", stats_json(file.stats(so, &g.mask))}});
    outputs.push_back({{"key", so.key()}, {"detector", so.detector}, {"plugin", so.plugin.empty() ? so.detector : so.plugin},
                       {"output", so.output}, {"version", so.version}, {"map", so.map},
                       {"description", so.description}, {"parameters", so.parameters}, {"stats", stats_json(all)},
                       {"top", tops}, {"groups", by_group}});
  }
  data["outputs"] = outputs;
  // The model view's example: the first example of the file with stored attention.
  const auto& has = file.has_attention();
  const auto first = std::find(has.begin(), has.end(), 1);
  if (first != has.end()) {
    const std::size_t pos = static_cast<std::size_t>(first - has.begin());
    if (!shown.count(pos)) shown[pos] = example_json(file, file.example(pos));
    data["model_view_example"] = pos;
  } else {
    data["model_view_example"] = nullptr;
  }
  json ex = json::object();
  for (auto& [pos, e] : shown) ex[std::to_string(pos)] = std::move(e);
  data["examples"] = ex;
  return data;
}

}  // namespace attnscan::report
