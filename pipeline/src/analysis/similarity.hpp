#pragma once
// Head similarity as in Clark et al. 2019: the mean Jensen-Shannon divergence between the attention
// distributions of two heads for the same query token, over every query token of every example with
// stored attention (streamed: memory does not grow with the file), and a 2-D classical MDS embedding
// of that matrix. Stored under /analysis/head_similarity/ of the result file.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/result_file.hpp"

namespace attnscan::analysis {

struct HeadSimilarity {
  std::vector<int64_t> layers, heads;  // the stored heads, in matrix order: (layers[i], heads[i])
  std::vector<double> js;              // [heads x heads], symmetric, zero diagonal
  std::vector<double> mds;             // [heads x 2]
  uint64_t examples = 0, queries = 0;  // averaged over
  std::size_t size() const { return layers.size(); }
};

inline constexpr const char* kSimilarityMethod =
    "mean Jensen-Shannon divergence (natural log) between the attention distributions of two heads for the same "
    "query token, over every query token of every example with stored attention; rows as stored";
inline constexpr const char* kMdsMethod = "classical (Torgerson) MDS of the divergence matrix, top two eigenvectors";

HeadSimilarity head_similarity(const ResultFile& file);
// Classical MDS: the k-dimensional coordinates of n points whose dissimilarities are d [n x n].
std::vector<double> classical_mds(const std::vector<double>& d, std::size_t n, std::size_t k);
// Writes /analysis/head_similarity/{js_divergence, mds, layer, head} with the methods as attributes.
void store_similarity(const std::filesystem::path& path, const HeadSimilarity& s);

}  // namespace attnscan::analysis
