#pragma once
// Read-only, memory-mapped view of a .safetensors file. The header is parsed and validated here;
// tensor data is never copied.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace attnscan {

enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool, Other };

const char* dtype_name(DType d);
std::size_t dtype_size(DType d);  // 0 for Other

struct TensorView {
  std::string name;
  DType dtype = DType::Other;
  std::string dtype_tag;  // as written in the header, e.g. "F32"
  std::vector<int64_t> shape;
  const std::byte* data = nullptr;
  std::size_t nbytes = 0;

  int64_t numel() const;
};

class SafetensorsFile {
 public:
  // Maps the file and validates its header: size field, JSON syntax, per-tensor dtype/shape/offsets,
  // and that every tensor lies inside the file (a truncated file names the first tensor cut off).
  explicit SafetensorsFile(const std::filesystem::path& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const std::vector<TensorView>& tensors() const { return tensors_; }
  const TensorView* find(const std::string& name) const;
  // Hands the pages read so far back to the kernel (they stay in the page cache): the process's footprint no
  // longer counts them, and a later read maps them in again. For once the weights have been copied or packed.
  void drop_pages() const;

 private:
  std::filesystem::path path_;
  void* map_ = nullptr;
  std::size_t size_ = 0;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::size_t> index_;
};

}  // namespace attnscan
