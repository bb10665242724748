#include "analysis/result_file.hpp"

#include <algorithm>
#include <cmath>
#include <queue>

#include "common/error.hpp"
#include "store/layout_file.hpp"

namespace attnscan::analysis {

namespace {

LayoutReader open_layout(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) throw Error(path.string() + ": no such file");
  {
    const h5::File f = h5::File::open_read(path);
    if (!f.has_attr("/", "format") || f.attr_string("/", "format") != kFormatName)
      throw Error(path.string() + ": not an attnscan output (no root attribute format = 'attnscan'); make one with "
                                  "`attnscan run`");
    const int64_t version = f.has_attr("/", "format_version") ? f.attr_int("/", "format_version") : -1;
    if (version > kFormatVersion)
      throw Error(path.string() + ": format_version " + std::to_string(version) + " is newer than this attnscan reads (" +
                  std::to_string(kFormatVersion) + "); use the attnscan that wrote it, or a newer one");
  }
  return LayoutReader(path);
}

}  // namespace

ResultFile::ResultFile(const std::filesystem::path& path) : path_(path), reader_(open_layout(path)) {
  root_ = read_root(reader_.file());
  if (params().scores.empty())
    throw Error(path.string() + ": no /scores (the run had no detectors); rerun with detectors, e.g. "
                                "`attnscan run -c CONFIG --set detectors=next_token,delimiter`");
  const auto offsets = reader_.file().read<int64_t>("examples/attention_offset", 0, examples());
  has_attention_.resize(offsets.size());
  for (std::size_t i = 0; i < offsets.size(); ++i) has_attention_[i] = offsets[i] >= 0;
}

const ScoreOutput& ResultFile::output(const std::string& name) const {
  for (const auto& so : params().scores)
    if (so.key() == name) return so;
  const ScoreOutput* only = nullptr;
  int matches = 0;
  for (const auto& so : params().scores)
    if (so.detector == name) only = &so, ++matches;
  if (matches == 1) return *only;
  std::string list;
  for (const auto& so : params().scores) list += (list.empty() ? "" : ", ") + so.key();
  throw Error(path_.string() + ": no detector output '" + name + "'" +
              (matches > 1 ? " (the detector has several outputs: name one as detector/output)" : "") +
              "; the file has: " + list + ". Add the detector to the run's detectors: to get it");
}

HeadStats ResultFile::stats(const ScoreOutput& so, const std::vector<uint8_t>* keep) const {
  return compute_head_stats(reader_.file(), so.key(), layers_x_heads(), keep);
}

std::size_t ResultFile::examples_with_attention() const {
  return static_cast<std::size_t>(std::count(has_attention_.begin(), has_attention_.end(), 1));
}

int ResultFile::stored_layer(int64_t layer) const {
  const auto& l = params().layers;
  auto it = std::find(l.begin(), l.end(), layer);
  return it == l.end() ? -1 : static_cast<int>(it - l.begin());
}

int ResultFile::stored_head(int64_t head) const {
  const auto& h = params().heads;
  auto it = std::find(h.begin(), h.end(), head);
  return it == h.end() ? -1 : static_cast<int>(it - h.begin());
}

std::size_t ResultFile::find_example(const std::string& id) const {
  const auto ids = reader_.file().read_strings("examples/id", 0, examples());
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == id) return i;
  std::string some;
  for (std::size_t i = 0; i < ids.size() && i < 5; ++i) some += (some.empty() ? "" : ", ") + ids[i];
  throw Error(path_.string() + ": no example with id '" + id + "' (ids are examples/id, e.g. " + some +
              "; `attnscan heads` and the report name them)");
}

ExampleView ResultFile::example(std::size_t i) const {
  const auto& f = reader_.file();
  ExampleView v;
  v.position = i;
  v.id = f.read_strings("examples/id", i, i + 1).at(0);
  v.sentence_a = f.read_strings("examples/sentence_a", i, i + 1).at(0);
  v.sentence_b = f.read_strings("examples/sentence_b", i, i + 1).at(0);
  v.label = f.read_strings("examples/label", i, i + 1).at(0);
  v.token_offset = static_cast<std::size_t>(f.read<int64_t>("examples/token_offset", i, i + 1).at(0));
  const auto t = static_cast<uint64_t>(v.token_offset);
  const auto n = static_cast<uint32_t>(f.read<int64_t>("examples/n_tokens", i, i + 1).at(0));
  v.tokens = f.read_strings("tokens/text", t, t + n);
  v.segment = f.read<uint8_t>("tokens/segment", t, t + n);
  v.special = f.read<uint8_t>("tokens/special", t, t + n);
  const int64_t o = f.read<int64_t>("examples/attention_offset", i, i + 1).at(0);
  if (o >= 0) {
    v.attention = reader_.attention_floats(static_cast<uint64_t>(o), static_cast<uint64_t>(o) + reader_.attention_count(n));
    if (params().dtype == AttentionDType::U8)
      for (auto& x : v.attention) x /= 255.0f;
  }
  return v;
}

std::vector<std::vector<ScoredExample>> top_examples(const ResultFile& file, const ScoreOutput& so,
                                                   const std::vector<std::size_t>& heads, std::size_t k) {
  using Entry = std::pair<float, std::size_t>;  // (score, position); min-heap keeps the k highest
  std::vector<std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>>> best(heads.size());
  const std::size_t lh = file.layers_x_heads(), n = file.examples();
  const std::string name = score_values(so.key());
  constexpr std::size_t kRows = 4096;
  for (std::size_t r = 0; r < n && k > 0; r += kRows) {
    const std::size_t end = std::min(n, r + kRows);
    const auto values = file.reader().file().read_rows(name, r, end);
    for (std::size_t i = r; i < end; ++i) {
      if (!file.has_attention()[i]) continue;
      for (std::size_t h = 0; h < heads.size(); ++h) {
        const float s = values[(i - r) * lh + heads[h]];
        if (std::isnan(s)) continue;
        if (best[h].size() < k) best[h].push({s, i});
        else if (s > best[h].top().first) best[h].pop(), best[h].push({s, i});
      }
    }
  }
  std::vector<std::vector<ScoredExample>> out(heads.size());
  for (std::size_t h = 0; h < heads.size(); ++h) {
    for (; !best[h].empty(); best[h].pop()) out[h].push_back({best[h].top().first, best[h].top().second});
    std::reverse(out[h].begin(), out[h].end());
  }
  return out;
}

}  // namespace attnscan::analysis
