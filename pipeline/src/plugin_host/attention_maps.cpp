#include "plugin_host/attention_maps.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace attnscan {

AttentionMap parse_attention_map(const std::string& text) {
  if (text == "weights") return AttentionMap::Weights;
  if (text == "norm") return AttentionMap::Norm;
  if (text == "rollout") return AttentionMap::Rollout;
  throw Error("map '" + text + "': expected weights, norm or rollout");
}

const char* attention_map_name(AttentionMap m) {
  return m == AttentionMap::Norm ? "norm" : m == AttentionMap::Rollout ? "rollout" : "weights";
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

std::vector<float> attention_rollout(const float* attention, int64_t layers, int64_t heads, std::size_t n) {
  const std::size_t nn = n * n;
  std::vector<float> out(static_cast<std::size_t>(layers) * nn);
  std::vector<double> mixed(nn), rolled(nn), next(nn);
  for (int64_t l = 0; l < layers; ++l) {
    std::fill(mixed.begin(), mixed.end(), 0.0);
    for (int64_t h = 0; h < heads; ++h) {
      const float* a = attention + static_cast<std::size_t>(l * heads + h) * nn;
      for (std::size_t k = 0; k < nn; ++k) mixed[k] += a[k];
    }
    for (std::size_t i = 0; i < n; ++i) {  // 0.5 * mean + 0.5 * I, each row normalised
      double sum = 0;
      for (std::size_t j = 0; j < n; ++j) {
        double& v = mixed[i * n + j];
        v = 0.5 * v / static_cast<double>(heads) + (i == j ? 0.5 : 0.0);
        sum += v;
      }
      for (std::size_t j = 0; j < n; ++j) mixed[i * n + j] /= sum;
    }
    if (l == 0) {
      rolled = mixed;
    } else {  // next = mixed x rolled
      std::fill(next.begin(), next.end(), 0.0);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < n; ++k) {
          const double m = mixed[i * n + k];
          for (std::size_t j = 0; j < n; ++j) next[i * n + j] += m * rolled[k * n + j];
        }
      rolled.swap(next);
    }
    std::transform(rolled.begin(), rolled.end(), out.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l) * nn),
                   [](double v) { return static_cast<float>(v); });
  }
  return out;
}

std::vector<sdk::Example> map_examples(AttentionMap map, const std::vector<sdk::Example>& batch,
                                       std::vector<std::vector<float>>& storage) {
  std::vector<sdk::Example> out(batch);
  storage.clear();
  if (map == AttentionMap::Weights) return out;
  storage.reserve(batch.size());
  for (auto& e : out) {
    const std::size_t n = e.size(), nn = n * n;
    if (map == AttentionMap::Norm) {
      if (!e.value_norms) throw Error("example " + e.id + ": map: norm needs the value norms, which this run did not compute");
      storage.push_back(norm_weighted_attention(e.attention, e.value_norms, e.layers, e.heads, n));
    } else if (map == AttentionMap::Rollout) {  // each head of a layer gets the layer's rollout
      const std::vector<float> rollout = attention_rollout(e.attention, e.layers, e.heads, n);
      std::vector<float> per_head(static_cast<std::size_t>(e.layers * e.heads) * nn);
      for (int64_t l = 0; l < e.layers; ++l)
        for (int64_t h = 0; h < e.heads; ++h)
          std::copy_n(rollout.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l) * nn), nn,
                      per_head.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l * e.heads + h) * nn));
      storage.push_back(std::move(per_head));
    }
    e.attention = storage.back().data();
  }
  return out;
}

}  // namespace attnscan
