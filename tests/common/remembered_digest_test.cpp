// Remembered SHA-256 digests (common/remembered_digest.hpp): looked up by the file's identity, missed after
// any change to the file, never remembered for a file that just changed, and right without a usable cache.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "common/remembered_digest.hpp"
#include "common/sha256.hpp"
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

class CacheAt {  // ATTNSCAN_CACHE for the test's lifetime
 public:
  explicit CacheAt(const fs::path& dir) { ::setenv("ATTNSCAN_CACHE", dir.c_str(), 1); }
  ~CacheAt() { ::unsetenv("ATTNSCAN_CACHE"); }
};

}  // namespace

TEST(RememberedDigest, ASettledFileIsRememberedAndAnyChangeMissesTheEntry) {
  const fs::path dir = attnscan::test::scratch_dir("remembered_digest");
  const fs::path cache = dir / "cache", file = dir / "weights.bin";
  const CacheAt at(cache);
  write(file, "the weights, version one");
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // settled: changed over 2 s ago
  const std::string digest = attnscan::sha256_file(file);
  EXPECT_EQ(attnscan::remembered_sha256_file(file), digest);
  ASSERT_EQ(entries(cache), 1u);
  // The entry is what a second call reads: one written over it is returned as it stands.
  const fs::path entry = fs::directory_iterator(cache / "digests")->path();
  const std::string other = attnscan::sha256_text("something else");
  write(entry, other + "\n");
  EXPECT_EQ(attnscan::remembered_sha256_file(file), other);
  write(entry, "not a digest\n");  // an unreadable entry is passed over, and written again
  EXPECT_EQ(attnscan::remembered_sha256_file(file), digest);
  std::string rewritten;
  std::getline(std::ifstream(entry), rewritten);
  EXPECT_EQ(rewritten, digest);
  // The same size and modification time with other bytes: the change time moved, so the entry is missed.
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  write(file, "the weights, version two");
  const timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
  EXPECT_EQ(attnscan::remembered_sha256_file(file), attnscan::sha256_file(file));
  EXPECT_NE(attnscan::sha256_file(file), digest);
  EXPECT_EQ(entries(cache), 1u) << "a file changed within 2 s is not remembered";
}

TEST(RememberedDigest, AnUnusableCacheGivesTheDigestAllTheSame) {
  const fs::path dir = attnscan::test::scratch_dir("remembered_digest_unusable");
  const fs::path file = dir / "data.tsv";
  write(dir / "a_file", "");
  const CacheAt at(dir / "a_file" / "cache");  // under a regular file: nothing can be created there
  write(file, "a\tb\n");
  EXPECT_EQ(attnscan::remembered_sha256_file(file), attnscan::sha256_file(file));
  EXPECT_THROW(attnscan::remembered_sha256_file(dir / "missing.tsv"), std::exception);
}
