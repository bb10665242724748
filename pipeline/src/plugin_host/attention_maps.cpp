#include "plugin_host/attention_maps.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace attnscan {

AttentionMap parse_attention_map(const std::string& text) {
  for (const auto& m : kAttentionMaps)
    if (text == m.name) return m.map;
  throw Error("map '" + text + "': expected " + attention_map_choices());
}

const char* attention_map_name(AttentionMap map) {
  for (const auto& m : kAttentionMaps)
    if (m.map == map) return m.name;
  return "weights";
}

const float* MixingMaps::get(AttentionMap map) const {
  return map == AttentionMap::ValueZeroing ? value_zeroing
         : map == AttentionMap::Alti       ? alti
         : map == AttentionMap::AltiRollout ? alti_rollout
                                            : nullptr;
}

std::vector<float> norm_weighted_attention(const float* attention, const float* norms, int64_t layers, int64_t heads,
                                           std::size_t n) {
  std::vector<float> out(static_cast<std::size_t>(layers * heads) * n * n);
  for (int64_t lh = 0; lh < layers * heads; ++lh) {
    const float* norm = norms + static_cast<std::size_t>(lh) * n;
    for (std::size_t i = 0; i < n; ++i) {
      const float* a = attention + (static_cast<std::size_t>(lh) * n + i) * n;
      float* row = out.data() + (static_cast<std::size_t>(lh) * n + i) * n;
      double sum = 0;
      for (std::size_t j = 0; j < n; ++j) sum += static_cast<double>(a[j]) * norm[j];
      if (sum > 0)
        for (std::size_t j = 0; j < n; ++j) row[j] = static_cast<float>(static_cast<double>(a[j]) * norm[j] / sum);
    }
  }
  return out;
}

namespace {

// layer_rollout of maps held as T (attention rollout's A'_l stay double until the product).
template <typename T>
std::vector<float> roll_out(const T* maps, int64_t layers, std::size_t n) {
  const std::size_t nn = n * n;
  std::vector<float> out(static_cast<std::size_t>(std::max<int64_t>(layers, 0)) * nn);
  if (out.empty()) return out;
  std::vector<double> rolled(maps, maps + nn), next(nn);
  std::copy(rolled.begin(), rolled.end(), out.begin());
  for (int64_t l = 1; l < layers; ++l) {  // next = M_l x rolled
    const T* m = maps + static_cast<std::size_t>(l) * nn;
    std::fill(next.begin(), next.end(), 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < n; ++k) {
        const double mik = m[i * n + k];
        for (std::size_t j = 0; j < n; ++j) next[i * n + j] += mik * rolled[k * n + j];
      }
    rolled.swap(next);
    std::copy(rolled.begin(), rolled.end(), out.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l) * nn));
  }
  return out;
}

}  // namespace

std::vector<float> layer_rollout(const float* maps, int64_t layers, std::size_t n) { return roll_out(maps, layers, n); }

std::vector<float> attention_rollout(const float* attention, int64_t layers, int64_t heads, std::size_t n) {
  const std::size_t nn = n * n;
  std::vector<double> mixed(static_cast<std::size_t>(layers) * nn);  // A'_l of every layer
  for (int64_t l = 0; l < layers; ++l)
    for (std::size_t i = 0; i < n; ++i) {  // 0.5 * mean over heads + 0.5 * I, each row normalised
      double* row = mixed.data() + static_cast<std::size_t>(l) * nn + i * n;
      for (int64_t h = 0; h < heads; ++h) {
        const float* a = attention + static_cast<std::size_t>(l * heads + h) * nn + i * n;
        for (std::size_t j = 0; j < n; ++j) row[j] += a[j];
      }
      double sum = 0;
      for (std::size_t j = 0; j < n; ++j) sum += row[j] = 0.5 * row[j] / static_cast<double>(heads) + (i == j ? 0.5 : 0.0);
      for (std::size_t j = 0; j < n; ++j) row[j] /= sum;
    }
  return roll_out(mixed.data(), layers, n);
}

// [L][H][n][n]: each head of a layer given the layer's map [L][n][n].
std::vector<float> per_head(const float* layer_maps, int64_t layers, int64_t heads, std::size_t n) {
  const std::size_t nn = n * n;
  std::vector<float> out(static_cast<std::size_t>(layers * heads) * nn);
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t h = 0; h < heads; ++h)
      std::copy_n(layer_maps + static_cast<std::size_t>(l) * nn, nn,
                  out.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l * heads + h) * nn));
  return out;
}

// What a rollout's layer l sees: it composes layers 0..l, and a product of maps reaches as far as their ranges
// add up (unbounded where any layer's is): a causal model's rollout stays causal.
static std::vector<sdk::KeyRange> rollout_ranges(const sdk::Example& e) {
  if (e.key_ranges.empty()) return {};
  std::vector<sdk::KeyRange> out;
  sdk::KeyRange reach{0, 0};
  const auto add = [](int32_t a, int32_t b) { return a < 0 || b < 0 ? -1 : a + b; };
  for (const sdk::KeyRange& r : e.key_ranges) {
    reach = {add(reach.before, r.before), add(reach.after, r.after)};
    out.push_back(reach);
  }
  return out;
}

std::vector<sdk::Example> map_examples(AttentionMap map, const std::vector<sdk::Example>& batch,
                                       const std::vector<MixingMaps>& mixing, std::vector<std::vector<float>>& storage) {
  std::vector<sdk::Example> out(batch);
  storage.clear();
  if (map == AttentionMap::Weights) return out;
  storage.reserve(batch.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    auto& e = out[k];
    const std::size_t n = e.size();
    if (map == AttentionMap::Norm) {
      if (!e.value_norms) throw Error("example " + e.id + ": map: norm needs the value norms, which this run did not compute");
      storage.push_back(norm_weighted_attention(e.attention, e.value_norms, e.layers, e.heads, n));
    } else if (map == AttentionMap::Rollout) {
      storage.push_back(per_head(attention_rollout(e.attention, e.layers, e.heads, n).data(), e.layers, e.heads, n));
      e.key_ranges = rollout_ranges(e);
    } else {
      const float* computed = k < mixing.size() ? mixing[k].get(map) : nullptr;
      if (!computed)
        throw Error("example " + e.id + ": map: " + attention_map_name(map) + " needs the encoder's " +
                    attention_map_name(map) + " maps, which this run did not compute");
      storage.push_back(per_head(computed, e.layers, e.heads, n));
    }
    e.attention = storage.back().data();
  }
  return out;
}

}  // namespace attnscan
