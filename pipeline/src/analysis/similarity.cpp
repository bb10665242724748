#include "analysis/similarity.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "analysis/fast_xlogx.hpp"
#include "common/error.hpp"
#include "common/durable.hpp"
#include "store/output_lock.hpp"

namespace attnscan::analysis {

namespace {

// sum_j m_j ln m_j of the mixture m = (pa + pb) / 2 (pa == pb: the row's own sum p ln p), in 8 lanes of
// partial sums so that the loop vectorises.
__attribute__((target_clones("avx512f", "avx2", "default")))
double sum_xlogx(const float* pa, const float* pb, std::size_t n) {
  double lane[8] = {};
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (std::size_t l = 0; l < 8; ++l) lane[l] += fast_xlogx((static_cast<double>(pa[j + l]) + pb[j + l]) / 2);
  double tail = 0;
  for (; j < n; ++j) tail += fast_xlogx((static_cast<double>(pa[j]) + pb[j]) / 2);
  return (((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]))) + tail;
}

// Eigenvalues and vectors (columns of v) of the symmetric n x n matrix a, by cyclic Jacobi rotations.
void symmetric_eigen(std::vector<double> a, std::size_t n, std::vector<double>& values, std::vector<double>& v) {
  v.assign(n * n, 0);
  for (std::size_t i = 0; i < n; ++i) v[i * n + i] = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q) off += a[p * n + q] * a[p * n + q];
    if (off < 1e-22) break;
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q) {
        if (std::fabs(a[p * n + q]) < 1e-300) continue;
        const double theta = (a[q * n + q] - a[p * n + p]) / (2 * a[p * n + q]);
        const double t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (std::size_t k = 0; k < n; ++k) {  // columns p, q
          const double akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (std::size_t k = 0; k < n; ++k) {  // rows p, q
          const double apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (std::size_t k = 0; k < n; ++k) {
          const double vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
  }
  values.resize(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = a[i * n + i];
}

}  // namespace

std::vector<double> classical_mds(const std::vector<double>& d, std::size_t n, std::size_t k) {
  std::vector<double> b(n * n), row(n, 0), col(n, 0);
  double all = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const double sq = d[i * n + j] * d[i * n + j];
      row[i] += sq / static_cast<double>(n);
      col[j] += sq / static_cast<double>(n);
      all += sq / static_cast<double>(n * n);
    }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) b[i * n + j] = -0.5 * (d[i * n + j] * d[i * n + j] - row[i] - col[j] + all);
  std::vector<double> values, vectors;
  symmetric_eigen(b, n, values, vectors);
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return values[x] > values[y]; });
  std::vector<double> out(n * k, 0);
  for (std::size_t c = 0; c < k && c < n; ++c) {
    const double scale = std::sqrt(std::max(0.0, values[order[c]]));
    for (std::size_t i = 0; i < n; ++i) out[i * k + c] = vectors[i * n + order[c]] * scale;
  }
  return out;
}

HeadSimilarity head_similarity(const ResultFile& file) {
  const auto& p = file.params();
  HeadSimilarity s;
  for (int64_t l : p.layers)
    for (int64_t h : p.heads) s.layers.push_back(l), s.heads.push_back(h);
  const std::size_t k = s.size();
  if (file.examples() == 0) throw Error(file.path().string() + ": holds no examples; head similarity needs some with attention");
  if (file.examples_with_attention() == 0)
    throw Error(file.path().string() + ": no example has stored attention (output.attention_every: 0); head similarity "
                                       "needs attention: rerun with output.attention_every >= 1");
  std::vector<double> sum(k * k, 0);
  for (std::size_t e = 0; e < file.examples(); ++e) {
    if (!file.has_attention()[e]) continue;
    const ExampleView ex = file.example(e);  // [k heads][n][n]
    const std::size_t n = ex.tokens.size();
    std::vector<double> entropy_term(k * n, 0);  // sum_j p log p of head a, query i
    for (std::size_t a = 0; a < k; ++a)
      for (std::size_t i = 0; i < n; ++i) {
        const float* row = &ex.attention[(a * n + i) * n];
        entropy_term[a * n + i] = sum_xlogx(row, row, n);
      }
    tbb::parallel_for(std::size_t(0), k, [&](std::size_t a) {  // row a of the matrix: no two threads share one
      for (std::size_t b = a + 1; b < k; ++b) {
        double js = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const double mixed = sum_xlogx(&ex.attention[(a * n + i) * n], &ex.attention[(b * n + i) * n], n);
          js += 0.5 * (entropy_term[a * n + i] + entropy_term[b * n + i]) - mixed;
        }
        sum[a * k + b] += js;
      }
    });
    s.examples++;
    s.queries += n;
  }
  s.js.assign(k * k, 0);
  for (std::size_t a = 0; a < k; ++a)
    for (std::size_t b = a + 1; b < k; ++b) s.js[a * k + b] = s.js[b * k + a] = sum[a * k + b] / static_cast<double>(s.queries);
  s.mds = classical_mds(s.js, k, 2);
  return s;
}

namespace {

// Writes /analysis/head_similarity/ into `path` in place.
void write_similarity(const std::filesystem::path& path, const HeadSimilarity& s) {
  h5::File f = h5::File::open_rw(path);
  const std::string g = "analysis/head_similarity";  // replaced when computed again
  const uint64_t k = s.size();
  f.write_array(g + "/js_divergence", {k, k}, std::vector<float>(s.js.begin(), s.js.end()));
  f.write_array(g + "/mds", {k, 2}, std::vector<float>(s.mds.begin(), s.mds.end()));
  f.write_array(g + "/layer", {k}, std::vector<float>(s.layers.begin(), s.layers.end()));
  f.write_array(g + "/head", {k}, std::vector<float>(s.heads.begin(), s.heads.end()));
  f.set_attr("/" + g, "method", std::string(kSimilarityMethod));
  f.set_attr("/" + g, "mds_method", std::string(kMdsMethod));
  f.set_attr("/" + g, "examples", static_cast<int64_t>(s.examples));
  f.set_attr("/" + g, "queries", static_cast<int64_t>(s.queries));
  f.flush();
}

}  // namespace

// HDF5 rewrites object headers and free-space records in place, so a kill or a full disk halfway
// through writing into the finished file could leave it unreadable. The results are written into a
// copy, OUT.h5.similarity.tmp, which then replaces OUT.h5 by an atomic rename: a reader sees the
// file before or after, never between. It costs one copy of the file's bytes.
void store_similarity(const std::filesystem::path& path, const HeadSimilarity& s) {
  const OutputLock lock(path, "attnscan similarity");
  const std::filesystem::path tmp = path.string() + ".similarity.tmp";
  std::error_code ec;
  std::filesystem::copy_file(path, tmp, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(path.string() + ": cannot copy it to " + tmp.string() + " to store the results (" + ec.message() +
                "); " + path.string() + " is unchanged");
  }
  try {
    write_similarity(tmp, s);
    durable_rename(tmp, path);
  } catch (const Error& e) {
    std::filesystem::remove(tmp, ec);
    throw Error(std::string(e.what()) + "; " + path.string() + " is unchanged");
  }
}

}  // namespace attnscan::analysis
