#pragma once
// Thin RAII layer over the HDF5 C API for the layout: create/open files, extendable 1-D datasets,
// UTF-8 strings, the half-float type and attributes. HDF5 errors become attnscan::Error naming the
// file and object. Every chunked dataset carries HDF5's Fletcher32 checksum, verified on each read;
// a read that fails says the file is damaged, naming the dataset and rows.
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "store/layout_columns.hpp"

namespace attnscan::h5 {

class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle();
  hid_t get() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

hid_t half_type();        // IEEE binary16, built once
hid_t utf8_string_type(); // variable-length UTF-8, built once

// Registers the Debian filter-plugin directory so lz4 works without HDF5_PLUGIN_PATH.
void ensure_plugin_path();

std::string library_version();  // of the HDF5 library loaded, e.g. "1.10.8"

// Variable-length strings live in HDF5's global heap, where HDF5 allows no checksum. Each string column
// created by File::create_dataset has a numeric column beside it, NAME_crc32 (uint32 under Fletcher32):
// zlib's CRC-32 of each row's UTF-8 bytes (as Python's zlib.crc32), appended, resized and checked on
// every read along with the strings (format_version 6; older files have none and read unchecked).
std::string text_checksum_column(const std::string& name);

class File {
 public:
  // compact_metadata: HDF5 1.10's own object headers and chunk indexes (a third of the 1.8 format's per
  // dataset), for files only attnscan reads back (block parts).
  static File create(const std::filesystem::path& path, bool compact_metadata = false);  // truncates
  static File open_read(const std::filesystem::path& path);
  static File open_rw(const std::filesystem::path& path);
  const std::filesystem::path& path() const { return path_; }
  hid_t id() const { return file_.get(); }
  void flush();

  // 1-D extendable chunked datasets.
  void create_dataset(const std::string& name, hid_t type, std::size_t chunk, Compression c = Compression::None);
  // Fixed-size contiguous dataset (fastest to write and read when uncompressed); `append` fills it
  // from the front.
  // With allocate_now the space is reserved at once, at a fixed byte offset (dataset_offset).
  void create_fixed_dataset(const std::string& name, hid_t type, std::size_t size, bool allocate_now = false);
  uint64_t dataset_offset(const std::string& name) const;
  // A 1-D virtual dataset (HDF5 VDS) of `size` values of `type`: each piece maps values [begin, begin + count)
  // to values [source_begin, ...) of dataset `source_dataset` in file `source_file` (a path relative to this
  // file's folder stays relative: HDF5 looks there first, so the folder can move).
  struct VirtualPiece {
    uint64_t begin, count, source_begin;
    std::string source_file, source_dataset;
  };
  void create_virtual_dataset(const std::string& name, hid_t type, std::size_t size, const std::vector<VirtualPiece>& pieces);
  // Extendable [rows, d1, d2, ...] float32 datasets (per-example score matrices).
  void create_rows_dataset(const std::string& name, const std::vector<uint64_t>& trailing, std::size_t chunk_rows);
  void append_rows(const std::string& name, const float* data, std::size_t rows);
  std::vector<float> read_rows(const std::string& name, std::size_t begin, std::size_t end) const;
  std::vector<uint64_t> dims(const std::string& name) const;
  // Fixed-shape float32 dataset written at once (aggregates).
  void write_array(const std::string& name, const std::vector<uint64_t>& shape, const std::vector<float>& data);
  // Sets the number of rows (the first dimension) of an extendable dataset.
  void resize(const std::string& name, std::size_t size);
  void remove(const std::string& name);
  std::size_t value_size(const std::string& name) const;  // bytes per value in the file
  bool has_checksum_filter(const std::string& name) const;  // chunked under Fletcher32
  // Raw values of dataset `name` (n of them, value_size() bytes each, at the front of buf) converted
  // in place to float32; buf must hold n floats.
  void raw_to_floats(const std::string& name, void* buf, std::size_t n) const;
  template <typename T>
  void append(const std::string& name, const std::vector<T>& values);
  void append_strings(const std::string& name, const std::vector<std::string>& values);
  void append_raw(const std::string& name, const void* data, std::size_t count);
  std::size_t length(const std::string& name) const;
  template <typename T>
  std::vector<T> read(const std::string& name, std::size_t begin, std::size_t end) const;
  std::vector<std::string> read_strings(const std::string& name, std::size_t begin, std::size_t end) const;
  // Any numeric 1-D dataset converted to float32 by HDF5 (e.g. float16 or uint8 attention).
  std::vector<float> read_floats(const std::string& name, std::size_t begin, std::size_t end) const;
  void read_raw(const std::string& name, std::size_t begin, std::size_t end, void* out) const;
  bool exists(const std::string& name) const;

  // Attributes on an object ("/" for the root).
  void set_attr(const std::string& obj, const std::string& name, const std::string& value);
  void set_attr(const std::string& obj, const std::string& name, int64_t value);
  void set_attr(const std::string& obj, const std::string& name, double value);
  void set_attr(const std::string& obj, const std::string& name, const std::vector<int64_t>& value);
  void set_attr(const std::string& obj, const std::string& name, const std::vector<std::string>& value);
  std::string attr_string(const std::string& obj, const std::string& name) const;
  std::vector<std::string> attr_strings(const std::string& obj, const std::string& name) const;  // 1-D or scalar
  int64_t attr_int(const std::string& obj, const std::string& name) const;
  std::vector<int64_t> attr_ints(const std::string& obj, const std::string& name) const;
  bool has_attr(const std::string& obj, const std::string& name) const;

 private:
  File(std::filesystem::path path, Handle h) : path_(std::move(path)), file_(std::move(h)) {}
  std::map<std::string, std::size_t> filled_;  // fixed-size datasets: values written so far
  [[noreturn]] void fail(const std::string& what) const;
  // A read of stored data failed: "FILE is damaged: WHAT (checksum mismatch | HDF5's reason)".
  [[noreturn]] void damaged(const std::string& what) const;
  Handle dataset(const std::string& name) const;  // open, or fail naming it
  void create_with(const std::string& name, hid_t type, hid_t space, hid_t dcpl);  // intermediate groups too
  void write_1d(const std::string& name, hid_t memtype, const void* data, std::size_t count);
  void read_1d(const std::string& name, hid_t memtype, std::size_t begin, std::size_t end, void* out) const;
  std::filesystem::path path_;
  Handle file_;
};

}  // namespace attnscan::h5
