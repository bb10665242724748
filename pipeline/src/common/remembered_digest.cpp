#include "common/remembered_digest.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>

#include "common/cache_dir.hpp"
#include "common/durable.hpp"
#include "common/sha256.hpp"
#include "common/unique_fd.hpp"

namespace attnscan {

namespace fs = std::filesystem;

namespace {

int64_t nanoseconds(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

// What an entry must match. Not the device number: nodes that share a file system number it differently.
std::string identity(const struct stat& st) {
  return std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " + std::to_string(nanoseconds(st.st_mtim)) +
         " " + std::to_string(nanoseconds(st.st_ctim));
}

bool is_digest(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// An entry is "DIGEST\nIDENTITY\n"; the digest where the entry is whole and of the file as it is now.
std::optional<std::string> remembered(const fs::path& entry, const std::string& now) {
  std::ifstream in(entry);
  std::string digest, of, rest;
  if (std::getline(in, digest) && is_digest(digest) && std::getline(in, of) && of == now && !in.eof() &&
      !std::getline(in, rest))
    return digest;
  return std::nullopt;
}

// A new file beside the entries (mkostemp: unique between processes and nodes), removed when it goes unless
// published. Its change time is the file system's clock when it was made.
class PendingEntry {
 public:
  explicit PendingEntry(const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::string name = (dir / "pending.XXXXXX").string();
    fd_.reset(::mkostemp(name.data(), O_CLOEXEC));
    if (!fd_) return;
    name_ = name;
    struct stat st {};
    if (::fstat(fd_.get(), &st) == 0) made_ns_ = nanoseconds(st.st_ctim);
  }
  ~PendingEntry() {
    if (!name_.empty()) ::unlink(name_.c_str());
  }
  PendingEntry(const PendingEntry&) = delete;
  PendingEntry& operator=(const PendingEntry&) = delete;

  std::optional<int64_t> made_ns() const { return made_ns_; }
  // Writes `text`, then renames the file over `entry`; a failure leaves the cache as it was.
  void publish(const std::string& text, const fs::path& entry) {
    try {
      write_all_at(fd_.get(), reinterpret_cast<const uint8_t*>(text.data()), text.size(), 0, name_);
    } catch (const std::exception&) {  // a full cache: the digest is right all the same
      return;
    }
    if (::rename(name_.c_str(), entry.c_str()) == 0) name_.clear();
  }

 private:
  UniqueFd fd_;
  std::string name_;
  std::optional<int64_t> made_ns_;
};

}  // namespace

namespace detail {

void remove_abandoned_pending(const fs::path& dir, int64_t now_ns) {
  constexpr int64_t kDayNs = int64_t{86'400} * 1'000'000'000;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    if (it->path().filename().string().rfind("pending.", 0) == 0 && ::stat(it->path().c_str(), &st) == 0 &&
        nanoseconds(st.st_ctim) + kDayNs < now_ns)
      ::unlink(it->path().c_str());
  }
}

}  // namespace detail

std::string remembered_sha256_file(const fs::path& path, std::chrono::nanoseconds settled) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat before {};
  if (!fd || ::fstat(fd.get(), &before) != 0) return sha256_file(path);  // sha256_file names what is wrong
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  if (ec) return sha256_fd(fd.get(), path);
  const fs::path dir = cache_dir() / "digests";
  const fs::path entry = dir / sha256_text(absolute.string());
  const std::string now = identity(before);
  if (auto digest = remembered(entry, now)) return *digest;

  PendingEntry pending(dir);  // made before the read: its time is when the read began, by the file's clock
  const std::string digest = sha256_fd(fd.get(), path);
  struct stat after {};
  const int64_t changed = std::max(nanoseconds(before.st_mtim), nanoseconds(before.st_ctim));
  const bool settled_before_and_during = pending.made_ns() && ::fstat(fd.get(), &after) == 0 &&
                                         identity(after) == now && changed + settled.count() <= *pending.made_ns();
  if (settled_before_and_during) pending.publish(digest + "\n" + now + "\n", entry);
  if (pending.made_ns()) detail::remove_abandoned_pending(dir, *pending.made_ns());
  return digest;
}

}  // namespace attnscan
