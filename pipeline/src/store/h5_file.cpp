#include "store/h5_file.hpp"

#include <dlfcn.h>

#include <H5PLpublic.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>

#include "common/error.hpp"

namespace attnscan::h5 {

namespace {

template <typename T>
hid_t native();
template <> hid_t native<uint64_t>() { return H5T_NATIVE_UINT64; }
template <> hid_t native<int64_t>() { return H5T_NATIVE_INT64; }
template <> hid_t native<uint32_t>() { return H5T_NATIVE_UINT32; }
template <> hid_t native<int32_t>() { return H5T_NATIVE_INT32; }
template <> hid_t native<uint8_t>() { return H5T_NATIVE_UINT8; }
template <> hid_t native<double>() { return H5T_NATIVE_DOUBLE; }

constexpr unsigned kLz4Filter = 32004;

herr_t collect_error(unsigned, const H5E_error2_t* e, void* data) {
  auto* innermost = static_cast<std::string*>(data);
  if (e->desc && *e->desc) *innermost = e->desc;
  return 0;
}

// Why the last HDF5 call failed, from its error stack: "checksum mismatch" when a Fletcher32 check
// fired, else HDF5's innermost description.
std::string hdf5_reason() {
  std::string innermost, all;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &innermost);
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        if (e->desc) *static_cast<std::string*>(data) += std::string(e->desc) + "\n";
        return 0;
      },
      &all);
  if (all.find("Fletcher32") != std::string::npos || all.find("checksum") != std::string::npos) return "checksum mismatch";
  return innermost.empty() ? "unreadable storage" : innermost;
}

std::string rows_text(std::size_t begin, std::size_t end) {
  return end == begin + 1 ? "row " + std::to_string(begin) : "rows " + std::to_string(begin) + ".." + std::to_string(end);
}

// Adds the Fletcher32 checksum filter: HDF5 computes it per chunk on write and fails a read whose
// chunk does not match.
void add_checksum(hid_t dcpl) { H5Pset_fletcher32(dcpl); }

}  // namespace

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    if (id_ >= 0 && close_) close_(id_);
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
  }
  return *this;
}

Handle::~Handle() {
  if (id_ >= 0 && close_) close_(id_);
}

hid_t half_type() {
  static hid_t t = [] {
    hid_t h = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(h, 15, 10, 5, 0, 10);
    H5Tset_size(h, 2);
    H5Tset_ebias(h, 15);
    return h;
  }();
  return t;
}

hid_t utf8_string_type() {
  static hid_t t = [] {
    hid_t s = H5Tcopy(H5T_C_S1);
    H5Tset_size(s, H5T_VARIABLE);
    H5Tset_cset(s, H5T_CSET_UTF8);
    return s;
  }();
  return t;
}

std::string library_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

void ensure_plugin_path() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Debian keeps filter plugins (lz4) beside the HDF5 library: LIBDIR/hdf5/serial/plugins. Found
    // from the loaded library, for any architecture; $HDF5_PLUGIN_PATH still comes first.
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&H5open), &info) || !info.dli_fname) return;
    std::error_code ec;
    const auto lib_dir = std::filesystem::canonical(info.dli_fname, ec).parent_path();
    for (const char* sub : {"hdf5/serial/plugins", "hdf5/plugins"})
      if (std::filesystem::is_directory(lib_dir / sub, ec)) H5PLappend((lib_dir / sub).c_str());
  });
}

void File::damaged(const std::string& what) const {
  throw Error(path_.string() + " is damaged: " + what + " (" + hdf5_reason() + "). Run `attnscan verify " +
              path_.string() + "` for a full check; restore the file or rerun the run that wrote it");
}

void File::fail(const std::string& what) const {
  // HDF5 does not say why a write failed; the system call under it leaves errno behind.
  // Every write operation clears errno first, so a stale value cannot be taken for this failure's.
  const int err = errno;
  const bool no_space = err == ENOSPC || err == EFBIG || err == EDQUOT;
  throw Error(path_.string() + ": HDF5: " + what +
              (no_space ? std::string(" (") + std::strerror(err) + ": the disk is full or a file-size limit was hit)" : ""));
}

static std::string unopenable_reason(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return "no such file";
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string("cannot be read: ") + std::strerror(errno);
  char head[8] = {};
  in.read(head, sizeof head);
  static const char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  const std::string why = hdf5_reason();
  if (why.find("unable to lock file") != std::string::npos)
    return "the file is locked: another process has it open for writing (" + why + "); wait for it to finish";
  if (in.gcount() == 8 && std::memcmp(head, kSignature, 8) == 0)
    return "the file is damaged: its HDF5 structure cannot be read (" + why + ")";
  return "not an HDF5 file, or damaged: its HDF5 signature is missing";
}

File File::create(const std::filesystem::path& path, bool compact_metadata) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are reported through exceptions
  errno = 0;
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (compact_metadata) H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_V110);
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  if (f < 0) throw Error(path.string() + ": cannot create HDF5 file" + (errno ? std::string(": ") + std::strerror(errno) : ""));
  return File(path, Handle(f, H5Fclose));
}

File File::open_rw(const std::filesystem::path& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  ensure_plugin_path();
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) throw Error(path.string() + ": cannot open for writing: " + unopenable_reason(path));
  return File(path, Handle(f, H5Fclose));
}

uint64_t File::dataset_offset(const std::string& name) const {
  Handle d = dataset(name);
  haddr_t a = H5Dget_offset(d.get());
  if (a == HADDR_UNDEF) fail(name + " has no contiguous storage");
  return static_cast<uint64_t>(a);
}

void File::resize(const std::string& name, std::size_t size) {
  errno = 0;
  Handle d = dataset(name);
  std::vector<hsize_t> extent;
  for (auto d0 : dims(name)) extent.push_back(d0);
  if (extent.empty()) fail("cannot resize " + name + ": not an array");
  extent[0] = size;  // rows; the trailing dimensions stay
  if (H5Dset_extent(d.get(), extent.data()) < 0) fail("cannot resize " + name);
  if (const std::string sums = text_checksum_column(name); exists(sums)) resize(sums, size);
}

std::size_t File::value_size(const std::string& name) const {
  Handle d = dataset(name);
  Handle type(H5Dget_type(d.get()), H5Tclose);
  return H5Tget_size(type.get());
}

bool File::has_checksum_filter(const std::string& name) const {
  Handle d = dataset(name);
  Handle dcpl(H5Dget_create_plist(d.get()), H5Pclose);
  unsigned flags = 0, config = 0;
  std::size_t n = 0;
  return H5Pget_filter_by_id2(dcpl.get(), H5Z_FILTER_FLETCHER32, &flags, &n, nullptr, 0, nullptr, &config) >= 0;
}

void File::raw_to_floats(const std::string& name, void* buf, std::size_t n) const {
  Handle d = dataset(name);
  Handle type(H5Dget_type(d.get()), H5Tclose);
  if (H5Tconvert(type.get(), H5T_NATIVE_FLOAT, n, buf, nullptr, H5P_DEFAULT) < 0) fail("cannot convert " + name + " to float32");
}

void File::remove(const std::string& name) {
  errno = 0;
  if (H5Ldelete(id(), name.c_str(), H5P_DEFAULT) < 0) fail("cannot remove " + name);
}

void File::create_rows_dataset(const std::string& name, const std::vector<uint64_t>& trailing, std::size_t chunk_rows) {
  std::vector<hsize_t> dims = {0}, maxdims = {H5S_UNLIMITED}, cdims = {std::max<hsize_t>(chunk_rows, 1)};
  for (auto d : trailing) {
    dims.push_back(d);
    maxdims.push_back(d);
    cdims.push_back(d);
  }
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data()), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_chunk(dcpl.get(), static_cast<int>(cdims.size()), cdims.data());
  add_checksum(dcpl.get());
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  hid_t d = H5Dcreate2(id(), name.c_str(), H5T_IEEE_F32LE, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT);
  if (d < 0) fail("cannot create dataset " + name);
  H5Dclose(d);
}

std::vector<uint64_t> File::dims(const std::string& name) const {
  Handle d = dataset(name);
  Handle space(H5Dget_space(d.get()), H5Sclose);
  int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dd(static_cast<std::size_t>(std::max(rank, 0)));
  H5Sget_simple_extent_dims(space.get(), dd.data(), nullptr);
  return std::vector<uint64_t>(dd.begin(), dd.end());
}

void File::append_rows(const std::string& name, const float* data, std::size_t rows) {
  if (rows == 0) return;
  errno = 0;
  Handle d = dataset(name);
  auto cur = dims(name);
  std::vector<hsize_t> next(cur.begin(), cur.end()), start(cur.size(), 0), count(cur.begin(), cur.end());
  next[0] = cur[0] + rows;
  if (H5Dset_extent(d.get(), next.data()) < 0) fail("cannot extend " + name);
  start[0] = cur[0];
  count[0] = rows;
  Handle space(H5Dget_space(d.get()), H5Sclose);
  H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  Handle mem(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
  if (H5Dwrite(d.get(), H5T_NATIVE_FLOAT, mem.get(), space.get(), H5P_DEFAULT, data) < 0) fail("cannot write " + name);
}

std::vector<float> File::read_rows(const std::string& name, std::size_t begin, std::size_t end) const {
  auto cur = dims(name);
  std::size_t per_row = 1;
  for (std::size_t i = 1; i < cur.size(); ++i) per_row *= cur[i];
  std::vector<float> out((end > begin ? end - begin : 0) * per_row);
  if (out.empty()) return out;
  Handle d = dataset(name);
  std::vector<hsize_t> start(cur.size(), 0), count(cur.begin(), cur.end());
  start[0] = begin;
  count[0] = end - begin;
  Handle space(H5Dget_space(d.get()), H5Sclose);
  H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  Handle mem(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
  if (H5Dread(d.get(), H5T_NATIVE_FLOAT, mem.get(), space.get(), H5P_DEFAULT, out.data()) < 0)
    damaged("dataset " + name + ", " + rows_text(begin, end) + " cannot be read");
  return out;
}

void File::write_array(const std::string& name, const std::vector<uint64_t>& shape, const std::vector<float>& data) {
  errno = 0;
  std::vector<hsize_t> dd(shape.begin(), shape.end());
  Handle space(H5Screate_simple(static_cast<int>(dd.size()), dd.data(), nullptr), H5Sclose);
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!data.empty()) {  // one chunk: the whole array, under a Fletcher32 checksum
    H5Pset_chunk(dcpl.get(), static_cast<int>(dd.size()), dd.data());
    add_checksum(dcpl.get());
  }
  if (exists(name)) remove(name);
  Handle d(H5Dcreate2(id(), name.c_str(), H5T_IEEE_F32LE, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT), H5Dclose);
  if (!d || H5Dwrite(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) < 0)
    fail("cannot write " + name);
}

File File::open_read(const std::filesystem::path& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  ensure_plugin_path();
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) throw Error(path.string() + ": cannot open as HDF5: " + unopenable_reason(path));
  return File(path, Handle(f, H5Fclose));
}

void File::flush() {
  errno = 0;
  if (H5Fflush(id(), H5F_SCOPE_GLOBAL) < 0) fail("flush failed");
}

std::string text_checksum_column(const std::string& name) { return name + "_crc32"; }

namespace {

std::vector<uint32_t> text_checksums(const std::vector<std::string>& values) {
  std::vector<uint32_t> sums;
  sums.reserve(values.size());
  for (const auto& s : values)
    sums.push_back(static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size()))));
  return sums;
}

}  // namespace

void File::create_dataset(const std::string& name, hid_t type, std::size_t chunk, Compression c) {
  errno = 0;
  hsize_t dims[1] = {0}, maxdims[1] = {H5S_UNLIMITED}, cdims[1] = {std::max<hsize_t>(chunk, 1)};
  Handle space(H5Screate_simple(1, dims, maxdims), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_chunk(dcpl.get(), 1, cdims);
  if (c == Compression::Deflate) {
    H5Pset_shuffle(dcpl.get());
    H5Pset_deflate(dcpl.get(), 4);
  } else if (c == Compression::Lz4) {
    ensure_plugin_path();
    if (H5Zfilter_avail(kLz4Filter) <= 0)
      fail("lz4 filter (id 32004) not available: install Debian's hdf5-filter-plugin");
    if (H5Pset_filter(dcpl.get(), kLz4Filter, H5Z_FLAG_MANDATORY, 0, nullptr) < 0) fail("cannot set lz4 filter");
  }
  // After compression: the checksum covers the bytes on disk. Variable-length strings live in the
  // global heap, outside any chunk, so HDF5 allows no checksum on them.
  if (H5Tis_variable_str(type) <= 0) add_checksum(dcpl.get());
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  hid_t d = H5Dcreate2(id(), name.c_str(), type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT);
  if (d < 0) fail("cannot create dataset " + name);
  H5Dclose(d);
  if (H5Tis_variable_str(type) > 0) create_dataset(text_checksum_column(name), H5T_STD_U32LE, chunk);
}

void File::create_with(const std::string& name, hid_t type, hid_t space, hid_t dcpl) {
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  hid_t d = H5Dcreate2(id(), name.c_str(), type, space, lcpl.get(), dcpl, H5P_DEFAULT);
  if (d < 0) fail("cannot create dataset " + name);
  H5Dclose(d);
}

void File::create_fixed_dataset(const std::string& name, hid_t type, std::size_t size, bool allocate_now) {
  errno = 0;
  hsize_t dims[1] = {size};
  Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER);  // every value is written; no fill pass
  if (allocate_now) H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY);
  create_with(name, type, space.get(), dcpl.get());
  filled_[name] = 0;
}

void File::create_virtual_dataset(const std::string& name, hid_t type, std::size_t size,
                                  const std::vector<VirtualPiece>& pieces) {
  errno = 0;
  hsize_t dims[1] = {size};
  Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  for (const auto& p : pieces) {
    if (p.count == 0) continue;
    hsize_t start[1] = {p.begin}, count[1] = {p.count}, source_start[1] = {p.source_begin};
    hsize_t source_dims[1] = {p.source_begin + p.count};
    Handle mine(H5Scopy(space.get()), H5Sclose);
    Handle theirs(H5Screate_simple(1, source_dims, nullptr), H5Sclose);
    if (H5Sselect_hyperslab(mine.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Sselect_hyperslab(theirs.get(), H5S_SELECT_SET, source_start, nullptr, count, nullptr) < 0 ||
        H5Pset_virtual(dcpl.get(), mine.get(), p.source_file.c_str(), p.source_dataset.c_str(), theirs.get()) < 0)
      fail("cannot map values " + std::to_string(p.begin) + ".." + std::to_string(p.begin + p.count) + " of " + name +
           " to " + p.source_file + ":" + p.source_dataset);
  }
  create_with(name, type, space.get(), dcpl.get());
}

Handle File::dataset(const std::string& name) const {
  Handle d(H5Dopen2(id(), name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d) damaged("dataset " + name + " cannot be opened (missing or its header is unreadable)");
  return d;
}

// Appends count values to a 1-D dataset: fills a fixed-size one from the front, extends the others.
// memtype < 0: the values are already in the dataset's own type.
void File::write_1d(const std::string& name, hid_t memtype, const void* data, std::size_t count) {
  if (count == 0) return;
  errno = 0;
  Handle d = dataset(name);
  Handle type(H5Dget_type(d.get()), H5Tclose);
  hsize_t start = 0, n = count;
  auto fixed = filled_.find(name);
  if (fixed != filled_.end()) {
    start = fixed->second;
  } else {
    Handle fspace(H5Dget_space(d.get()), H5Sclose);
    H5Sget_simple_extent_dims(fspace.get(), &start, nullptr);
    hsize_t next = start + count;
    if (H5Dset_extent(d.get(), &next) < 0) fail("cannot extend " + name);
  }
  Handle space(H5Dget_space(d.get()), H5Sclose);
  if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr) < 0) fail("overfull " + name);
  Handle mem(H5Screate_simple(1, &n, nullptr), H5Sclose);
  if (H5Dwrite(d.get(), memtype < 0 ? type.get() : memtype, mem.get(), space.get(), H5P_DEFAULT, data) < 0)
    fail("cannot write " + name);
  if (fixed != filled_.end()) fixed->second += count;
}

// Reads [begin, end) of a 1-D dataset into out; memtype < 0: in the dataset's own type.
void File::read_1d(const std::string& name, hid_t memtype, std::size_t begin, std::size_t end, void* out) const {
  if (end <= begin) return;
  Handle d = dataset(name);
  Handle type(H5Dget_type(d.get()), H5Tclose);
  Handle space(H5Dget_space(d.get()), H5Sclose);
  hsize_t start = begin, n = end - begin;
  H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr);
  Handle mem(H5Screate_simple(1, &n, nullptr), H5Sclose);
  if (H5Dread(d.get(), memtype < 0 ? type.get() : memtype, mem.get(), space.get(), H5P_DEFAULT, out) < 0)
    damaged("dataset " + name + ", " + rows_text(begin, end) + " cannot be read");
}

void File::append_raw(const std::string& name, const void* data, std::size_t count) { write_1d(name, -1, data, count); }

template <typename T>
void File::append(const std::string& name, const std::vector<T>& values) {
  write_1d(name, native<T>(), values.data(), values.size());
}

void File::append_strings(const std::string& name, const std::vector<std::string>& values) {
  std::vector<const char*> ptrs;
  ptrs.reserve(values.size());
  for (const auto& s : values) ptrs.push_back(s.c_str());
  append_raw(name, ptrs.data(), ptrs.size());
  if (const std::string sums = text_checksum_column(name); exists(sums)) append(sums, text_checksums(values));
}

std::size_t File::length(const std::string& name) const {
  Handle d = dataset(name);
  Handle space(H5Dget_space(d.get()), H5Sclose);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  return static_cast<std::size_t>(n);
}

bool File::exists(const std::string& name) const { return H5Lexists(id(), name.c_str(), H5P_DEFAULT) > 0; }

void File::read_raw(const std::string& name, std::size_t begin, std::size_t end, void* out) const {
  read_1d(name, -1, begin, end, out);
}

template <typename T>
std::vector<T> File::read(const std::string& name, std::size_t begin, std::size_t end) const {
  std::vector<T> out(end > begin ? end - begin : 0);
  read_1d(name, native<T>(), begin, end, out.data());
  return out;
}

std::vector<float> File::read_floats(const std::string& name, std::size_t begin, std::size_t end) const {
  std::vector<float> out(end > begin ? end - begin : 0);
  read_1d(name, H5T_NATIVE_FLOAT, begin, end, out.data());
  return out;
}

std::vector<std::string> File::read_strings(const std::string& name, std::size_t begin, std::size_t end) const {
  std::vector<char*> ptrs(end > begin ? end - begin : 0, nullptr);
  if (ptrs.empty()) return {};
  read_1d(name, utf8_string_type(), begin, end, ptrs.data());
  std::vector<std::string> out;
  out.reserve(ptrs.size());
  for (char* p : ptrs) {
    out.emplace_back(p ? p : "");
    H5free_memory(p);  // HDF5 allocated each string
  }
  if (const std::string sums = text_checksum_column(name); exists(sums)) {
    const auto expected = read<uint32_t>(sums, begin, end);
    const auto got = text_checksums(out);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (got[i] != expected[i])
        throw Error(path_.string() + " is damaged: dataset " + name + ", row " + std::to_string(begin + i) +
                    ": its text does not match its checksum in " + sums + ". Run `attnscan verify " + path_.string() +
                    "` for a full check; restore the file or rerun the run that wrote it");
  }
  return out;
}

namespace {

Handle open_object(hid_t file, const std::string& obj) { return Handle(H5Oopen(file, obj.c_str(), H5P_DEFAULT), H5Oclose); }

// False when HDF5 could not replace the attribute (read-only file, full disk, damaged header).
bool write_attr(hid_t obj, const std::string& name, hid_t type, hid_t space, const void* data) {
  if (H5Aexists(obj, name.c_str()) > 0 && H5Adelete(obj, name.c_str()) < 0) return false;
  Handle a(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return a && H5Awrite(a.get(), type, data) >= 0;
}

}  // namespace

void File::set_attr(const std::string& obj, const std::string& name, const std::string& value) {
  errno = 0;
  Handle o = open_object(id(), obj);
  if (!o) fail("no object " + obj);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  const char* p = value.c_str();
  if (!write_attr(o.get(), name, utf8_string_type(), space.get(), &p))
    fail("cannot write attribute " + obj + ":" + name);
}

void File::set_attr(const std::string& obj, const std::string& name, int64_t value) {
  errno = 0;
  Handle o = open_object(id(), obj);
  if (!o) fail("no object " + obj);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  if (!write_attr(o.get(), name, H5T_NATIVE_INT64, space.get(), &value))
    fail("cannot write attribute " + obj + ":" + name);
}

void File::set_attr(const std::string& obj, const std::string& name, double value) {
  errno = 0;
  Handle o = open_object(id(), obj);
  if (!o) fail("no object " + obj);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  if (!write_attr(o.get(), name, H5T_NATIVE_DOUBLE, space.get(), &value))
    fail("cannot write attribute " + obj + ":" + name);
}

void File::set_attr(const std::string& obj, const std::string& name, const std::vector<int64_t>& value) {
  errno = 0;
  Handle o = open_object(id(), obj);
  if (!o) fail("no object " + obj);
  hsize_t n = value.size();
  Handle space(n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL), H5Sclose);
  if (!write_attr(o.get(), name, H5T_NATIVE_INT64, space.get(), value.data()))
    fail("cannot write attribute " + obj + ":" + name);
}

void File::set_attr(const std::string& obj, const std::string& name, const std::vector<std::string>& value) {
  errno = 0;
  Handle o = open_object(id(), obj);
  if (!o) fail("no object " + obj);
  hsize_t n = value.size();
  Handle space(n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL), H5Sclose);
  std::vector<const char*> ptrs;
  for (const auto& v : value) ptrs.push_back(v.c_str());
  if (!write_attr(o.get(), name, utf8_string_type(), space.get(), ptrs.data()))
    fail("cannot write attribute " + obj + ":" + name);
}

std::vector<std::string> File::attr_strings(const std::string& obj, const std::string& name) const {
  Handle o = open_object(id(), obj);
  Handle a(o ? H5Aopen(o.get(), name.c_str(), H5P_DEFAULT) : -1, H5Aclose);
  if (!a) damaged("attribute " + obj + ":" + name + " is missing or unreadable");
  Handle space(H5Aget_space(a.get()), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  std::vector<char*> ptrs(static_cast<std::size_t>(std::max<hssize_t>(n, 0)), nullptr);
  if (!ptrs.empty() && H5Aread(a.get(), utf8_string_type(), ptrs.data()) < 0) damaged("attribute " + obj + ":" + name + " cannot be read");
  std::vector<std::string> out;
  for (char* p : ptrs) {
    out.emplace_back(p ? p : "");
    H5free_memory(p);
  }
  return out;
}

bool File::has_attr(const std::string& obj, const std::string& name) const {
  Handle o = open_object(id(), obj);
  return o && H5Aexists(o.get(), name.c_str()) > 0;
}

std::string File::attr_string(const std::string& obj, const std::string& name) const {
  Handle o = open_object(id(), obj);
  Handle a(o ? H5Aopen(o.get(), name.c_str(), H5P_DEFAULT) : -1, H5Aclose);
  if (!a) damaged("attribute " + obj + ":" + name + " is missing or unreadable");
  char* p = nullptr;
  if (H5Aread(a.get(), utf8_string_type(), &p) < 0) damaged("attribute " + obj + ":" + name + " cannot be read");
  std::string s = p ? p : "";
  H5free_memory(p);
  return s;
}

int64_t File::attr_int(const std::string& obj, const std::string& name) const {
  Handle o = open_object(id(), obj);
  Handle a(o ? H5Aopen(o.get(), name.c_str(), H5P_DEFAULT) : -1, H5Aclose);
  if (!a) damaged("attribute " + obj + ":" + name + " is missing or unreadable");
  int64_t v = 0;
  if (H5Aread(a.get(), H5T_NATIVE_INT64, &v) < 0) damaged("attribute " + obj + ":" + name + " cannot be read");
  return v;
}

std::vector<int64_t> File::attr_ints(const std::string& obj, const std::string& name) const {
  Handle o = open_object(id(), obj);
  Handle a(o ? H5Aopen(o.get(), name.c_str(), H5P_DEFAULT) : -1, H5Aclose);
  if (!a) damaged("attribute " + obj + ":" + name + " is missing or unreadable");
  Handle space(H5Aget_space(a.get()), H5Sclose);
  hssize_t n = H5Sget_simple_extent_npoints(space.get());
  std::vector<int64_t> v(static_cast<std::size_t>(std::max<hssize_t>(n, 0)));
  if (!v.empty() && H5Aread(a.get(), H5T_NATIVE_INT64, v.data()) < 0) damaged("attribute " + obj + ":" + name + " cannot be read");
  return v;
}

template void File::append<uint64_t>(const std::string&, const std::vector<uint64_t>&);
template void File::append<int64_t>(const std::string&, const std::vector<int64_t>&);
template void File::append<uint32_t>(const std::string&, const std::vector<uint32_t>&);
template void File::append<int32_t>(const std::string&, const std::vector<int32_t>&);
template void File::append<uint8_t>(const std::string&, const std::vector<uint8_t>&);
template void File::append<double>(const std::string&, const std::vector<double>&);
template std::vector<uint64_t> File::read<uint64_t>(const std::string&, std::size_t, std::size_t) const;
template std::vector<int64_t> File::read<int64_t>(const std::string&, std::size_t, std::size_t) const;
template std::vector<uint32_t> File::read<uint32_t>(const std::string&, std::size_t, std::size_t) const;
template std::vector<int32_t> File::read<int32_t>(const std::string&, std::size_t, std::size_t) const;
template std::vector<uint8_t> File::read<uint8_t>(const std::string&, std::size_t, std::size_t) const;
template std::vector<double> File::read<double>(const std::string&, std::size_t, std::size_t) const;

}  // namespace attnscan::h5
