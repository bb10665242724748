// The tensor map's transforms on hand-made values: a Conv1D's transpose, one part of a fused q|k|v
// projection side by side and per head (GPT-NeoX), and Gemma's 1 + w.
#include <gtest/gtest.h>

#include <numeric>

#include "model/tensor_map.hpp"

using namespace attnscan;

namespace {

std::vector<float> counting(std::size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

}  // namespace

TEST(TensorMap, TransposedPartOfAConv1D) {
  // Stored [in 2, out 6] (q|k|v, 2 rows each once transposed): element (i, o) = 6 i + o.
  TensorMap m;
  const TensorSource& k = m.add("k", {2, 2}, "c_attn.weight").transposed().part_of(1, 3);
  EXPECT_EQ(k.stored_shape(), (std::vector<int64_t>{2, 6}));
  // k's rows are outputs 2 and 3: row r, column i = stored (i, 2 + r)
  EXPECT_EQ(transformed(k, counting(12)), (std::vector<float>{2, 8, 3, 9}));
}

TEST(TensorMap, PartOfAProjectionStoredPerHead) {
  // 2 heads of head size 1, stored [q0 k0 v0 q1 k1 v1] x 2 columns: v is rows 2 and 5
  TensorMap m;
  const TensorSource& v = m.add("v", {2, 2}, "qkv.weight").part_of(2, 3, 2);
  EXPECT_EQ(v.stored_shape(), (std::vector<int64_t>{6, 2}));
  EXPECT_EQ(transformed(v, counting(12)), (std::vector<float>{4, 5, 10, 11}));
  const TensorSource& b = m.add("q.bias", {2}, "qkv.bias").part_of(0, 3, 2);
  EXPECT_EQ(transformed(b, counting(6)), (std::vector<float>{0, 3}));
}

TEST(TensorMap, OnePlusTheStoredWeight) {
  TensorMap m;
  const TensorSource& n = m.add("norm", {3}, "norm.weight").plus_one();
  EXPECT_EQ(transformed(n, {-1.0f, 0.0f, 0.5f}), (std::vector<float>{0.0f, 1.0f, 1.5f}));
  EXPECT_FALSE(m.add("plain", {3}, "w").copied());
}
