#include "model/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace attnscan {

namespace {

struct DTypeEntry {
  const char* tag;
  DType dtype;
  std::size_t size;
};
constexpr DTypeEntry kDTypes[] = {
    {"F32", DType::F32, 4}, {"F16", DType::F16, 2}, {"BF16", DType::BF16, 2}, {"F64", DType::F64, 8},
    {"I64", DType::I64, 8}, {"I32", DType::I32, 4}, {"I16", DType::I16, 2},   {"I8", DType::I8, 1},
    {"U8", DType::U8, 1},   {"BOOL", DType::Bool, 1},
};

// Header JSON is capped like the reference implementation (100 MB) so a corrupt size field cannot
// make us allocate gigabytes.
constexpr uint64_t kMaxHeader = 100ull * 1000 * 1000;

}  // namespace

const char* dtype_name(DType d) {
  for (const auto& e : kDTypes)
    if (e.dtype == d) return e.tag;
  return "unsupported";
}

std::size_t dtype_size(DType d) {
  for (const auto& e : kDTypes)
    if (e.dtype == d) return e.size;
  return 0;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : path_(path) {
  const std::string where = path.string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ModelError(where + ": cannot open weights file: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw ModelError(where + ": cannot stat weights file");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    throw ModelError(where + ": corrupt safetensors header: file is " + std::to_string(size_) +
                     " bytes, shorter than the 8-byte header size");
  }
  map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw ModelError(where + ": cannot memory-map weights file: " + std::strerror(errno));
  }
  try {
    const auto* bytes = static_cast<const std::byte*>(map_);
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | std::to_integer<uint64_t>(bytes[i]);
    if (header_len > kMaxHeader || header_len > size_ - 8)
      throw ModelError(where + ": corrupt safetensors header: header size " + std::to_string(header_len) +
                       " exceeds the file size " + std::to_string(size_));
    nlohmann::json header;
    try {
      header = nlohmann::json::parse(reinterpret_cast<const char*>(bytes + 8),
                                     reinterpret_cast<const char*>(bytes + 8 + header_len));
    } catch (const nlohmann::json::exception& e) {
      throw ModelError(where + ": corrupt safetensors header: " + e.what());
    }
    if (!header.is_object()) throw ModelError(where + ": corrupt safetensors header: not a JSON object");
    const std::byte* data = bytes + 8 + header_len;
    const std::size_t data_size = size_ - 8 - header_len;
    for (auto it = header.begin(); it != header.end(); ++it) {
      const std::string& name = it.key();
      if (name == "__metadata__") continue;  // free-form strings: nothing attnscan reads
      auto bad = [&](const std::string& why) {
        return ModelError(where + ": corrupt safetensors header: tensor '" + name + "': " + why);
      };
      const auto& t = *it;
      if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") || !t.contains("data_offsets"))
        throw bad("needs dtype, shape and data_offsets");
      TensorView v;
      v.name = name;
      if (!t["dtype"].is_string()) throw bad("dtype is not a string");
      v.dtype_tag = t["dtype"].get<std::string>();
      for (const auto& e : kDTypes)
        if (v.dtype_tag == e.tag) v.dtype = e.dtype;
      const auto& shape = t["shape"];
      if (!shape.is_array()) throw bad("shape is not an array");
      for (const auto& d : shape) {
        if (!d.is_number_unsigned()) throw bad("shape has a non-integer or negative dimension");
        v.shape.push_back(d.get<int64_t>());
      }
      const auto& off = t["data_offsets"];
      if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
        throw bad("data_offsets must be two non-negative integers");
      auto begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
      if (end < begin) throw bad("data_offsets end before they begin");
      if (end > data_size)
        throw ModelError(where + ": file is truncated: tensor '" + name + "' needs bytes up to " +
                         std::to_string(end) + " of the data section but only " + std::to_string(data_size) +
                         " are present");
      v.nbytes = static_cast<std::size_t>(end - begin);
      if (v.dtype != DType::Other && static_cast<uint64_t>(v.numel()) * dtype_size(v.dtype) != v.nbytes)
        throw bad("holds " + std::to_string(v.nbytes) + " bytes but shape and dtype need " +
                  std::to_string(static_cast<uint64_t>(v.numel()) * dtype_size(v.dtype)));
      v.data = data + begin;
      index_[name] = tensors_.size();
      tensors_.push_back(std::move(v));
    }
  } catch (...) {
    ::munmap(map_, size_);
    map_ = nullptr;
    throw;
  }
}

void SafetensorsFile::drop_pages() const {
  if (map_) ::madvise(map_, size_, MADV_DONTNEED);  // a private, read-only mapping: nothing is lost
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(map_, size_);
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace attnscan
