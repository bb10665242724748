#include "store/offset_baselines.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

namespace attnscan {

int OffsetCounts::best_offset() const {
  int best = 0;
  for (int o = kMinOffset; o <= kMaxOffset; ++o) {
    const int64_t c = correct[o - kMinOffset], b = correct[best - kMinOffset];
    if (c > b || (c == b && std::abs(o) < std::abs(best))) best = o;  // ascending o: -k is kept over +k
  }
  return best;
}

namespace {

constexpr std::size_t kExamplesAtOnce = 4096;

// One example's words: (sentence, word_index) -> the head and relation of its first piece.
void count_example(const std::vector<uint8_t>& segment, const std::vector<int32_t>& word_index,
                   const std::vector<int32_t>& dep_head, const std::vector<std::string>& dep_relation, std::size_t t0,
                   std::size_t t1, std::map<std::string, OffsetCounts>& out) {
  std::map<std::pair<uint8_t, int32_t>, std::size_t> words;  // -> its first token
  int32_t length[2] = {0, 0};  // words per sentence: the last stored word_index + 1
  for (std::size_t t = t0; t < t1; ++t) {
    if (word_index[t] < 0) continue;
    const uint8_t s = segment[t] ? 1 : 0;
    words.emplace(std::make_pair(s, word_index[t]), t);
    length[s] = std::max(length[s], word_index[t] + 1);
  }
  for (const auto& [key, t] : words) {
    const auto [s, i] = key;
    const int32_t head = dep_head[t];
    if (head < 0 || !words.count({s, head})) continue;  // the root, or a head cut off by truncation
    const std::string& rel = dep_relation[t];
    OffsetCounts& c = out[rel.substr(0, rel.find(':'))];
    ++c.words;
    for (int o = kMinOffset; o <= kMaxOffset; ++o)
      if (std::max(-1, std::min(i + o, length[s] - 1)) == head) ++c.correct[o - kMinOffset];
  }
}

}  // namespace

std::map<std::string, OffsetCounts> offset_counts(const h5::File& f, std::size_t examples) {
  std::map<std::string, OffsetCounts> out;
  for (std::size_t a = 0; a < examples; a += kExamplesAtOnce) {
    const std::size_t b = std::min(examples, a + kExamplesAtOnce);
    const auto n = f.read<int64_t>("examples/n_tokens", a, b);
    const auto offset = f.read<int64_t>("examples/token_offset", a, b);
    const auto t0 = static_cast<std::size_t>(offset.front()), t1 = static_cast<std::size_t>(offset.back() + n.back());
    const auto segment = f.read<uint8_t>("tokens/segment", t0, t1);
    const auto word_index = f.read<int32_t>("tokens/word_index", t0, t1);
    const auto head = f.read<int32_t>(kDepHead, t0, t1);
    const auto relation = f.read_strings(kDepRelation, t0, t1);
    for (std::size_t e = 0; e < n.size(); ++e) {
      const auto s = static_cast<std::size_t>(offset[e]) - t0;
      count_example(segment, word_index, head, relation, s, s + static_cast<std::size_t>(n[e]), out);
    }
  }
  return out;
}

bool is_dependency_output(const ScoreOutput& so) { return (so.plugin.empty() ? so.detector : so.plugin) == "dependency"; }
std::string dependency_relation(const ScoreOutput& so) { return so.output.substr(0, so.output.rfind('.')); }
std::string dependency_direction(const ScoreOutput& so) { return so.output.substr(so.output.rfind('.') + 1); }

void write_offset_baselines(h5::File& f, const LayoutParams& p) {
  if (!p.trees || std::none_of(p.scores.begin(), p.scores.end(), is_dependency_output)) return;
  const auto counts = offset_counts(f, f.length("examples/index"));
  for (const auto& so : p.scores) {
    if (!is_dependency_output(so)) continue;
    const auto it = counts.find(dependency_relation(so));
    const OffsetCounts c = it == counts.end() ? OffsetCounts{} : it->second;
    const std::string group = "/scores/" + so.key();
    f.set_attr(group, "words", c.words);
    f.set_attr(group, "best_offset", static_cast<int64_t>(c.best_offset()));
    f.set_attr(group, "offset_correct", c.best_correct());
    f.set_attr(group, "offset_baseline", c.words > 0 ? static_cast<double>(c.best_correct()) / static_cast<double>(c.words)
                                                     : std::numeric_limits<double>::quiet_NaN());
    f.set_attr(group, "offset_method",
               std::string("Clark et al. 2019: the head of word i predicted as word clamp(i + o, -1, words - 1), best o "
                           "in -5..5 over the file (ties: smaller |o|, then negative); from tokens/dep_head"));
  }
}

}  // namespace attnscan
