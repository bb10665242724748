// Remembered SHA-256 digests (common/remembered_digest.hpp): looked up by the file's identity, missed after
// any change to the file, never remembered for a file that just changed, and right without a usable cache.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <iterator>

#include "common/remembered_digest.hpp"
#include "common/sha256.hpp"
#include "support/scoped_env.hpp"
#include "support/test_paths.hpp"

namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

std::size_t entries(const fs::path& cache) {
  if (!fs::exists(cache / "digests")) return 0;
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(cache / "digests")) n += e.is_regular_file();
  return n;
}

struct CacheAt : attnscan::test::ScopedEnv {  // ATTNSCAN_CACHE for the test's lifetime
  explicit CacheAt(const fs::path& dir) : ScopedEnv("ATTNSCAN_CACHE", dir.string()) {}
};

std::string first_line(const fs::path& p) {
  std::string line;
  std::getline(std::ifstream(p), line);
  return line;
}

constexpr std::chrono::nanoseconds kAtOnce{0};  // settled as soon as written: no test waits 2 s

}  // namespace

TEST(RememberedDigest, ASettledFileIsRememberedAndAnyChangeMissesTheEntry) {
  const fs::path dir = attnscan::test::scratch_dir("remembered_digest");
  const fs::path cache = dir / "cache", file = dir / "weights.bin";
  const CacheAt at(cache);
  write(file, "the weights, version one");
  const std::string digest = attnscan::sha256_file(file);
  EXPECT_EQ(attnscan::remembered_sha256_file(file, kAtOnce), digest);
  ASSERT_EQ(entries(cache), 1u);
  // The entry is what a second call reads, also through another spelling of the same path.
  const fs::path entry = fs::directory_iterator(cache / "digests")->path();
  std::string text((std::istreambuf_iterator<char>(std::ifstream(entry).rdbuf())), std::istreambuf_iterator<char>());
  const std::string other = attnscan::sha256_text("something else");
  write(entry, other + text.substr(64));
  EXPECT_EQ(attnscan::remembered_sha256_file(dir / "." / "weights.bin", kAtOnce), other);
  for (const std::string& broken : {std::string("not a digest") + text.substr(64), text.substr(0, text.size() - 1),
                                    text + "more\n"}) {  // a damaged entry is passed over, and written again
    write(entry, broken);
    EXPECT_EQ(attnscan::remembered_sha256_file(file, kAtOnce), digest);
    EXPECT_EQ(first_line(entry), digest);
  }
  // The same size and modification time with other bytes: the change time moved, so the entry is missed,
  // and replaced: one entry per path.
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  write(file, "the weights, version two");
  const timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
  const std::string two = attnscan::sha256_file(file);
  EXPECT_NE(two, digest);
  EXPECT_EQ(attnscan::remembered_sha256_file(file, kAtOnce), two);
  EXPECT_EQ(first_line(entry), two);
  EXPECT_EQ(entries(cache), 1u);
  // A file changed within the default 2 s is hashed and not remembered.
  write(file, "the weights, version three");
  EXPECT_EQ(attnscan::remembered_sha256_file(file), attnscan::sha256_file(file));
  EXPECT_EQ(first_line(entry), two);
  EXPECT_EQ(entries(cache), 1u) << "no pending file is left behind";
}

TEST(RememberedDigest, PendingEntriesADayOldAreRemovedYoungerOnesAndEntriesKept) {
  const fs::path dir = attnscan::test::scratch_dir("remembered_digest_pending");
  const fs::path pending = dir / "pending.AbC123", entry = dir / attnscan::sha256_text("/some/path");
  write(pending, "");
  write(entry, "");
  struct stat st {};
  ASSERT_EQ(::stat(pending.c_str(), &st), 0);
  const int64_t made = static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  constexpr int64_t kHour = int64_t{3600} * 1'000'000'000;
  attnscan::detail::remove_abandoned_pending(dir, made + 23 * kHour);
  EXPECT_TRUE(fs::exists(pending)) << "23 hours old: a live process may still own it";
  attnscan::detail::remove_abandoned_pending(dir, made + 25 * kHour);
  EXPECT_FALSE(fs::exists(pending)) << "25 hours old: abandoned";
  EXPECT_TRUE(fs::exists(entry)) << "only pending entries are removed";
}

TEST(RememberedDigest, AnUnusableCacheGivesTheDigestAllTheSame) {
  const fs::path dir = attnscan::test::scratch_dir("remembered_digest_unusable");
  const fs::path file = dir / "data.tsv";
  write(dir / "a_file", "");
  const CacheAt at(dir / "a_file" / "cache");  // under a regular file: nothing can be created there
  write(file, "a\tb\n");
  EXPECT_EQ(attnscan::remembered_sha256_file(file, kAtOnce), attnscan::sha256_file(file));
  EXPECT_THROW(attnscan::remembered_sha256_file(dir / "missing.tsv", kAtOnce), std::exception);
}
