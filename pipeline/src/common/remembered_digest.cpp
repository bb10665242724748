#include "common/remembered_digest.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>

#include "common/cache_dir.hpp"
#include "common/durable.hpp"
#include "common/error.hpp"
#include "common/sha256.hpp"

namespace attnscan {

namespace {

constexpr int64_t kSettledNs = 2'000'000'000;  // a file changed more recently is not remembered

int64_t nanoseconds(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

// The entry's name for the file as it is now; nullopt when it cannot be stat'ed.
std::optional<std::string> identity(const std::filesystem::path& absolute, struct stat& st) {
  if (::stat(absolute.c_str(), &st) != 0) return std::nullopt;
  return sha256_text(absolute.string() + "\n" + std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " +
                     std::to_string(st.st_size) + " " + std::to_string(nanoseconds(st.st_mtim)) + " " +
                     std::to_string(nanoseconds(st.st_ctim)));
}

bool is_digest(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

std::string remembered_sha256_file(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  struct stat before {};
  const auto key = ec ? std::nullopt : identity(absolute, before);
  if (!key) return sha256_file(path);  // sha256_file names what is wrong with the file
  const std::filesystem::path entry = cache_dir() / "digests" / *key;
  {
    std::ifstream in(entry);
    std::string remembered;
    if (in && std::getline(in, remembered) && is_digest(remembered)) return remembered;
  }
  const int64_t read_at =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string digest = sha256_file(path);
  struct stat after {};
  const bool settled = identity(absolute, after) == key &&
                       read_at - std::max(nanoseconds(before.st_mtim), nanoseconds(before.st_ctim)) > kSettledNs;
  if (!settled) return digest;
  const std::filesystem::path tmp = entry.string() + ".tmp." + std::to_string(::getpid());
  try {  // written whole under a temporary name, then renamed: never seen half-written
    std::filesystem::create_directories(entry.parent_path());
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << digest << "\n";
      if (!out.flush()) throw Error("cannot write " + tmp.string());
    }
    durable_rename(tmp, entry);
  } catch (const std::exception&) {  // a read-only or full cache: the digest is right all the same
    std::filesystem::remove(tmp, ec);
  }
  return digest;
}

}  // namespace attnscan
