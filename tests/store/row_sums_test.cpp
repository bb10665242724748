// The row-sum check of `attnscan verify` accepts every row a run can store: softmax rows of any length
// rounded to uint8 or float16 as the writer rounds them, including the worst case (every value rounded
// the same way), and still refuses a row that was changed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "store/file_check.hpp"

using namespace attnscan;

namespace {

std::vector<float> softmax(const std::vector<float>& logits) {
  float top = logits[0];
  for (float x : logits) top = std::max(top, x);
  std::vector<float> p(logits.size());
  float sum = 0;
  for (std::size_t k = 0; k < p.size(); ++k) sum += p[k] = std::exp(logits[k] - top);
  for (float& x : p) x /= sum;
  return p;
}

// The row's sum as `verify` computes it after the writer's rounding (example_columns.cpp for uint8,
// HDF5's round-to-nearest conversion for float16).
double stored_sum(const std::vector<float>& p, const std::string& dtype) {
  double s = 0;
  for (float x : p) {
    if (dtype == "uint8") s += static_cast<double>(std::lround(std::min(1.0f, std::max(0.0f, x)) * 255.0f)) / 255.0;
    else if (dtype == "float16") s += static_cast<double>(static_cast<float>(static_cast<_Float16>(x)));
    else s += x;
  }
  return s;
}

bool within(double s, const RowSumRange& r) { return s >= r.low && s <= r.high; }

}  // namespace

TEST(RowSums, UniformRowsOfEveryLengthAreWithinTheirDtypesRange) {
  // 1/n rounds the same way in every place: the largest error a row of n values can have.
  for (const std::string dtype : {"uint8", "float16", "float32"})
    for (uint64_t n = 1; n <= 4096; n = n < 64 ? n + 1 : n * 2) {
      const std::vector<float> p(n, 1.0f / static_cast<float>(n));
      const double s = stored_sum(p, dtype);
      EXPECT_TRUE(within(s, row_sum_range(dtype, n))) << dtype << " n=" << n << " sum " << s;
    }
  // The rows `verify` called damaged before the range widened with n: 60-70 tokens in uint8.
  EXPECT_LT(stored_sum(std::vector<float>(60, 1.0f / 60), "uint8"), 0.965);
}

TEST(RowSums, RandomSoftmaxRowsOfLongSequencesAreWithinRange) {
  std::mt19937 gen(7);
  for (const std::string dtype : {"uint8", "float16", "float32"})
    for (uint64_t n : {8u, 70u, 512u, 4096u})
      for (float sharpness : {0.1f, 1.0f, 4.0f, 12.0f}) {
        std::normal_distribution<float> logit(0.0f, sharpness);
        for (int trial = 0; trial < 20; ++trial) {
          std::vector<float> logits(n);
          for (float& x : logits) x = logit(gen);
          const double s = stored_sum(softmax(logits), dtype);
          EXPECT_TRUE(within(s, row_sum_range(dtype, n))) << dtype << " n=" << n << " sum " << s;
        }
      }
}

TEST(RowSums, AChangedRowIsStillOutsideTheRange) {
  // (uint8 rows of n values may be off by n/510 in all: the longer the row, the larger a change it misses.)
  for (const std::string dtype : {"uint8", "float16", "float32"})
    for (uint64_t n : {8u, 64u, 200u}) {
      if (dtype == "uint8" && n > 64) continue;
      std::vector<float> p(n, 1.0f / static_cast<float>(n));
      p[0] += 0.5f;  // one value changed, as flipped bytes or a partial write would change it
      EXPECT_FALSE(within(stored_sum(p, dtype), row_sum_range(dtype, n))) << dtype << " n=" << n;
    }
}
