#include "model/tensor_map.hpp"

#include <algorithm>

namespace attnscan {

std::string tensor_roles::layer(int64_t layer, const std::string& part) {
  return "layers." + std::to_string(layer) + "." + part;
}

std::vector<int64_t> TensorSource::stored_shape() const {
  std::vector<int64_t> s = shape;
  if (!s.empty()) s[0] *= parts;
  if (transpose && s.size() == 2) std::swap(s[0], s[1]);
  return s;
}

std::vector<float> transformed(const TensorSource& source, const std::vector<float>& stored) {
  const std::vector<int64_t> shape = source.stored_shape();
  const int64_t rows = shape.empty() ? 1 : (source.transpose ? shape[1] : shape[0]);
  const int64_t cols = shape.size() == 2 ? (source.transpose ? shape[0] : shape[1]) : 1;
  // The stored tensor as [rows, cols] rows of the role's layout.
  std::vector<float> full(stored.size());
  if (source.transpose) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) full[static_cast<std::size_t>(r * cols + c)] = stored[static_cast<std::size_t>(c * rows + r)];
  } else {
    full = stored;
  }
  // The part's rows: one block of rows / parts, or per head `parts` blocks of rows / (parts * heads).
  const int64_t heads = std::max<int64_t>(1, source.interleaved_heads);
  const int64_t block = rows / (source.parts * heads);
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(rows / source.parts * cols));
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t first = (h * source.parts + source.part) * block;
    out.insert(out.end(), full.begin() + first * cols, full.begin() + (first + block) * cols);
  }
  if (source.add_one)
    for (float& v : out) v = 1.0f + v;
  return out;
}

}  // namespace attnscan
