// What is stored can be proven intact (issue 19): checksums on what is stored and their checks on
// read and on resume, and the store's own resources (attributes, file descriptors, score rows,
// dtypes) never failing in silence. Hand-made chunks: no model.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include "common/error.hpp"
#include "store/attention_checksums.hpp"
#include "store/crc32c.hpp"
#include "store/file_check.hpp"
#include "common/half_float.hpp"
#include "store/layout_file.hpp"
#include "store/output_file.hpp"
#include "store/output_session.hpp"
#include "store/parts_folder.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

// One layer, two heads; every example's attention is uniform over its n tokens.
LayoutParams layout(AttentionDType dtype = AttentionDType::F32) {
  LayoutParams p;
  p.dtype = dtype;
  p.layers = {0};
  p.heads = {0, 1};
  p.model_layers = 1;
  p.model_heads = 2;
  p.scores = {{"det", "out", "1.0", "a test output", ""}};
  return p;
}

constexpr uint32_t kTokens = 4;
constexpr uint64_t kValuesPerExample = 2 * kTokens * kTokens;

// Block b: rows 2b and 2b+1, each with kTokens tokens and stored float32 attention; scores 1000+row.
LayoutChunk block(uint64_t b, bool with_attention_bytes) {
  LayoutChunk c;
  for (uint64_t i = 0; i < 2; ++i) {
    const uint64_t row = 2 * b + i;
    auto& e = c.examples;
    e.index.push_back(row);
    e.row.push_back(row + 1);
    e.id.push_back("ex" + std::to_string(row));
    e.sentence_a.push_back("a");
    e.sentence_b.push_back("b");
    e.label.push_back("");
    e.has_label.push_back(0);
    e.label_value.push_back(NAN);
    e.n_tokens.push_back(kTokens);
    e.tokens_a.push_back(1);
    e.tokens_b.push_back(1);
    e.truncated.push_back(0);
    e.token_offset.push_back(kTokens * i);
    e.attention_offset.push_back(static_cast<int64_t>(kValuesPerExample * i));
    for (uint32_t t = 0; t < kTokens; ++t) {
      c.tokens.id.push_back(static_cast<int32_t>(t));
      c.tokens.word_index.push_back(static_cast<int32_t>(t));
      c.tokens.text.push_back("t");
      c.tokens.word.push_back("t");
      c.tokens.segment.push_back(0);
      c.tokens.special.push_back(0);
      c.tokens.char_start.push_back(t == 0 ? 0 : -1);  // "a": the first token covers it
      c.tokens.char_end.push_back(t == 0 ? 1 : -1);
    }
    auto& s = c.scores["det/out"];
    s.values.push_back(1000.0f + static_cast<float>(row));
    s.values.push_back(1000.5f + static_cast<float>(row));
    s.baseline.push_back(0.25f);
  }
  if (with_attention_bytes) {
    std::vector<float> v(2 * kValuesPerExample, 1.0f / kTokens);
    c.attention.resize(v.size() * sizeof(float));
    std::memcpy(c.attention.data(), v.data(), c.attention.size());
  }
  return c;
}

RootInfo identity() {
  RootInfo r;
  r.identity = {"config: x\n", "m", "d", "det 1.0 abc\n"};
  r.block_rows = 2;
  return r;
}

// A final file of `blocks` blocks with float32 attention in one contiguous dataset, as a run without
// compression writes it.
fs::path final_file(const std::string& name, uint64_t blocks) {
  const fs::path path = test::scratch_dir(name) / "out.h5";
  std::ostringstream log;
  OutputSession s(path, "test");
  EXPECT_TRUE(s.begin(identity(), layout(), false, log));
  s.plan_attention({}, log);
  for (uint64_t b = 0; b < blocks; ++b) {
    LayoutChunk c = block(b, false);
    std::vector<float> v(2 * kValuesPerExample, 1.0f / kTokens);
    s.write_attention(b, 0, reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float));
    s.commit(b, 2, std::move(c));
  }
  s.finish(2 * blocks, log);
  return path;
}

// Byte offset of the first occurrence of `needle` in the file (-1 if none).
long find_bytes(const fs::path& path, const void* needle, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = bytes.find(std::string(static_cast<const char*>(needle), n));
  return at == std::string::npos ? -1 : static_cast<long>(at);
}

void flip(const fs::path& path, long offset, std::size_t n) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  for (std::size_t i = 0; i < n; ++i) {
    f.seekg(offset + static_cast<long>(i));
    const char c = static_cast<char>(f.get() ^ 0x5a);
    f.seekp(offset + static_cast<long>(i));
    f.put(c);
  }
}

std::size_t open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Crc32c, MatchesTheStandardCheckValueAndChains) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);  // the CRC-32C check value (RFC 3720)
  EXPECT_EQ(crc32c("56789", 5, crc32c("1234", 4)), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  EXPECT_EQ(crc32c_portable("123456789", 9), 0xE3069283u);
}

TEST(Crc32c, HardwareAndTablePathsAgreeOnEveryLengthAndAlignment) {
  std::vector<uint8_t> bytes(100003 + 16);
  uint32_t x = 12345;
  for (auto& b : bytes) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 24);
  for (std::size_t start = 0; start < 8; ++start)  // from 12,288 bytes on, three chains over 4,096-byte stripes
    for (std::size_t n : {0, 1, 7, 8, 9, 63, 64, 65, 1000, 12287, 12288, 12295, 24576, 40000, 100003}) {
      EXPECT_EQ(crc32c(bytes.data() + start, n), crc32c_portable(bytes.data() + start, n)) << start << " " << n;
      EXPECT_EQ(crc32c(bytes.data() + start, n, 0xDEADBEEF), crc32c_portable(bytes.data() + start, n, 0xDEADBEEF));
    }
}

TEST(Crc32c, EveryBodyTheCpuHasGivesTheTableChecksum) {
  // Lengths around the folding bodies' 512-byte start and 256-byte blocks (each folded lane ends on
  // another's bytes, so a wrong constant changes the result), every start within a 64-byte line.
  std::vector<uint8_t> bytes(300000 + 64);
  uint32_t x = 4242;
  for (auto& b : bytes) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 24);
  int bodies = 0;
  for (Crc32cBody body : kCrc32cBodies) {
    if (!crc32c_has(body)) continue;
    ++bodies;
    EXPECT_EQ(crc32c_with(body, "123456789", 9), 0xE3069283u);
    for (std::size_t start = 0; start < 64; start += 9)
      for (std::size_t n : {0, 5, 255, 256, 511, 512, 513, 767, 768, 1024, 1040, 4095, 12288, 65536, 131072, 300000}) {
        EXPECT_EQ(crc32c_with(body, bytes.data() + start, n), crc32c_portable(bytes.data() + start, n))
            << static_cast<int>(body) << " " << start << " " << n;
        EXPECT_EQ(crc32c_with(body, bytes.data() + start, n, 0x9E3779B9u),
                  crc32c_portable(bytes.data() + start, n, 0x9E3779B9u));
      }
  }
  EXPECT_GE(bodies, 1);
  for (Crc32cBody body : {Crc32cBody::FoldingAvx2, Crc32cBody::FoldingAvx512})
    if (!crc32c_has(body))
      std::printf("note: this CPU lacks VPCLMULQDQ%s; folding body %d was not run\n",
                  body == Crc32cBody::FoldingAvx512 ? " with AVX-512" : "", static_cast<int>(body));
}

TEST(Crc32c, CombinedPiecesEqualTheChecksumOfTheirConcatenation) {
  std::vector<uint8_t> bytes(300000);
  uint32_t x = 777;
  for (auto& b : bytes) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 24);
  const uint32_t whole = crc32c(bytes.data(), bytes.size());
  for (std::size_t cut : {0, 1, 7, 8, 4096, 131072, 299999, 300000}) {
    const uint32_t a = crc32c(bytes.data(), cut), b = crc32c(bytes.data() + cut, bytes.size() - cut);
    EXPECT_EQ(crc32c_combine(a, b, bytes.size() - cut), whole) << cut;
  }
  EXPECT_EQ(crc32c_combine(crc32c("1234", 4), crc32c("56789", 5), 5), 0xE3069283u);
  EXPECT_EQ(crc32c_combine(0xE3069283u, 0, 0), 0xE3069283u);  // an empty piece changes nothing
}

TEST(SpanChecksums, PiecesAddedInAnyOrderGiveEachSpansChecksum) {
  constexpr std::size_t vs = 2;
  const uint64_t values = 3 * kChecksumSpan + 1000;  // three whole spans and a short last one
  std::vector<uint8_t> bytes(values * vs);
  uint32_t x = 99;
  for (auto& b : bytes) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 24);
  const auto expected = [&](uint64_t s) {
    const uint64_t a = s * kChecksumSpan, b = std::min(values, a + kChecksumSpan);
    return crc32c(bytes.data() + a * vs, (b - a) * vs);
  };
  // Blocks cut anywhere, committed out of order; the block [cuts[3], cuts[4]) is missing.
  const std::vector<uint64_t> cuts = {0, 5, kChecksumSpan + 17, kChecksumSpan + 40000, 2 * kChecksumSpan + 3, values};
  SpanChecksums known;
  for (std::size_t k : {4, 0, 2, 1}) {
    const uint64_t a = cuts[k], n = cuts[k + 1] - a;
    EXPECT_EQ(known.add(a, bytes.data() + a * vs, n, vs), crc32c(bytes.data() + a * vs, n * vs)) << k;
  }
  uint32_t crc = 0;
  EXPECT_TRUE(known.span(0, values, vs, crc));
  EXPECT_EQ(crc, expected(0));
  EXPECT_FALSE(known.span(1, values, vs, crc));  // part of it was never added
  EXPECT_FALSE(known.span(2, values, vs, crc));
  EXPECT_TRUE(known.span(3, values, vs, crc));
  EXPECT_EQ(crc, expected(3));
  known.add(cuts[3], bytes.data() + cuts[3] * vs, cuts[4] - cuts[3], vs);
  for (uint64_t s = 0; s < 4; ++s) {
    ASSERT_TRUE(known.span(s, values, vs, crc)) << s;
    EXPECT_EQ(crc, expected(s)) << s;
  }
}

TEST(SpanChecksums, RangesTileWhatWasAddedAndNewPartsOfASpanEndItsWholeChecksum) {
  constexpr std::size_t vs = 2;
  const uint64_t values = 2 * kChecksumSpan + 300;
  std::vector<uint8_t> bytes(values * vs), other(values * vs);
  uint32_t x = 7;
  for (auto& b : bytes) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 24);
  for (auto& b : other) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 24);
  const auto crc_of = [&](const std::vector<uint8_t>& v, uint64_t a, uint64_t n) { return crc32c(v.data() + a * vs, n * vs); };
  SpanChecksums known;  // three "examples" written, the middle one covering span 1 whole
  const std::vector<uint64_t> cuts = {0, kChecksumSpan - 10, 2 * kChecksumSpan + 5, values};
  for (std::size_t k : {2, 0, 1}) known.add(cuts[k], bytes.data() + cuts[k] * vs, cuts[k + 1] - cuts[k], vs);
  uint32_t crc = 0;
  ASSERT_TRUE(known.range(0, values, vs, crc));
  EXPECT_EQ(crc, crc_of(bytes, 0, values));
  ASSERT_TRUE(known.range(cuts[1], cuts[3] - cuts[1], vs, crc));
  EXPECT_EQ(crc, crc_of(bytes, cuts[1], cuts[3] - cuts[1]));
  EXPECT_FALSE(known.range(3, 10, vs, crc));  // does not start where an added piece does
  // A span read back whole (a resume's check), then rewritten in two parts (its block redone): the
  // parts, not the old whole, are its checksum.
  known.add(kChecksumSpan, bytes.data() + kChecksumSpan * vs, kChecksumSpan, vs);
  known.add(kChecksumSpan, other.data() + kChecksumSpan * vs, 100, vs);
  std::vector<uint8_t> now = bytes;
  std::copy_n(other.begin() + static_cast<std::ptrdiff_t>(kChecksumSpan * vs), 100 * vs,
              now.begin() + static_cast<std::ptrdiff_t>(kChecksumSpan * vs));
  EXPECT_FALSE(known.span(1, values, vs, crc));  // [kChecksumSpan + 100, 2 * kChecksumSpan) not added since
  known.add(kChecksumSpan + 100, now.data() + (kChecksumSpan + 100) * vs, kChecksumSpan - 100, vs);
  ASSERT_TRUE(known.span(1, values, vs, crc));
  EXPECT_EQ(crc, crc_of(now, kChecksumSpan, kChecksumSpan));
  ASSERT_TRUE(known.range(0, values, vs, crc));
  EXPECT_EQ(crc, crc_of(now, 0, values));
}

TEST(HalfFloat, EveryValueConvertsAsHdf5ConvertsIt) {
  std::vector<uint16_t> all(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = static_cast<uint16_t>(h);
  std::vector<float> reference(all.size());
  std::memcpy(reference.data(), all.data(), all.size() * sizeof(uint16_t));
  ASSERT_GE(H5Tconvert(h5::half_type(), H5T_NATIVE_FLOAT, all.size(), reference.data(), nullptr, H5P_DEFAULT), 0);
  for (uint32_t h = 0; h < 65536; ++h) {
    const float mine = half_to_float(all[h]);
    if (std::isnan(reference[h])) EXPECT_TRUE(std::isnan(mine)) << h;
    else EXPECT_EQ(mine, reference[h]) << "half 0x" << std::hex << h;
    EXPECT_EQ(std::signbit(mine), std::signbit(reference[h])) << h;
  }
}

TEST(Integrity, AFinalFileVerifiesAndFlippedAttentionBytesAreNamed) {
  const fs::path path = final_file("integrity_attention", 3);
  const CheckReport clean = check_layout_file(path);
  EXPECT_TRUE(clean.ok()) << clean.problems.front();
  EXPECT_EQ(clean.format_version, kFormatVersion);
  EXPECT_EQ(clean.attention_values, 3 * 2 * kValuesPerExample);
  EXPECT_EQ(clean.rows_checked, 3u * 2 * 2 * kTokens);
  uint64_t at = 0;
  {
    LayoutReader r(path);
    at = r.file().dataset_offset("attention/values");
  }
  flip(path, static_cast<long>(at + 4 * kValuesPerExample * 2 + 8), 32);  // inside example 2
  const LayoutReader r(path);
  EXPECT_NE(error_of([&] { r.attention_floats(0, kValuesPerExample); }).find(
                path.string() + " is damaged: dataset attention/values, values 0..192 (checksum mismatch)"),
            std::string::npos);
  const CheckReport bad = check_layout_file(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.problems.front().find("dataset attention/values, values 0..192 (checksum mismatch)"), std::string::npos)
      << bad.problems.front();
}

// Two blocks written raw into OUT.h5.tmp (the run's direct path) and committed, block 1's first value
// flipped in OUT.h5.tmp before or after its commit, then the run finished: the finished file's check.
CheckReport finished_after_a_flip(const std::string& name, bool before_commit) {
  const fs::path path = test::scratch_dir(name) / "out.h5";
  const auto flip_block1 = [&] {
    const std::vector<float> block1(16, 0.125f);
    const long at = find_bytes(path.string() + ".tmp", block1.data(), block1.size() * sizeof(float));
    EXPECT_GE(at, 0);
    flip(path.string() + ".tmp", at + 4, 2);
  };
  {
    std::ostringstream log;
    OutputSession s(path, "test");
    EXPECT_TRUE(s.begin(identity(), layout(), false, log));
    AttentionPlan plan;
    plan.block_start = {{0, 0}, {1, 2 * kValuesPerExample}};
    plan.total_values = 4 * kValuesPerExample;
    s.plan_attention(plan, log);
    for (uint64_t b = 0; b < 2; ++b) {
      std::vector<float> v(2 * kValuesPerExample, b ? 0.125f : 0.25f);
      s.write_attention(b, 0, reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float));
      if (b == 1 && before_commit) flip_block1();
      s.commit(b, 2, block(b, false));
    }
    if (!before_commit) flip_block1();
    s.finish(4, log);
  }
  return check_layout_file(path);
}

// Attention written raw into OUT.h5.tmp is checksummed as it is written: bytes that change after their
// block's commit are not blessed by the finished file's checksums ...
TEST(Integrity, AttentionChangedAfterItsCommitFailsTheFinishedFilesChecks) {
  const CheckReport bad = finished_after_a_flip("integrity_after_commit", false);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.problems.front().find("dataset attention/values, values 0..128 (checksum mismatch)"), std::string::npos)
      << bad.problems.front();
}

// ... nor bytes that change between their write and their block's commit: the commit records what was
// written, not what the file holds by then.
TEST(Integrity, AttentionChangedBeforeItsCommitFailsTheFinishedFilesChecks) {
  const CheckReport bad = finished_after_a_flip("integrity_before_commit", true);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.problems.front().find("dataset attention/values, values 0..128 (checksum mismatch)"), std::string::npos)
      << bad.problems.front();
}

TEST(Integrity, FlippedScoreBytesFailTheRead) {
  const fs::path path = final_file("integrity_scores", 2);
  const float marker = 1002.5f;  // the score of row 2, head 1: unique in the file
  const long at = find_bytes(path, &marker, sizeof marker);
  ASSERT_GE(at, 0);
  flip(path, at, 4);
  const LayoutReader r(path);
  EXPECT_NE(error_of([&] { r.file().read_rows("scores/det/out/values", 0, 4); })
                .find(path.string() + " is damaged: dataset scores/det/out/values, rows 0..4 cannot be read (checksum mismatch)"),
            std::string::npos);
  EXPECT_FALSE(check_layout_file(path).ok());
}

TEST(Integrity, AnUnknownDtypeIsRefusedNotReadAsUint8) {
  const fs::path path = final_file("integrity_dtype", 1);
  {
    h5::File f = h5::File::open_rw(path);
    f.set_attr("/attention", "dtype", std::string("bfloat16"));
  }
  EXPECT_NE(error_of([&] { LayoutReader r(path); }).find("attribute /attention:dtype is 'bfloat16', not float32, float16 or uint8"),
            std::string::npos);
}

TEST(Integrity, AFailedAttributeWriteIsAnError) {
  const fs::path path = final_file("integrity_attr", 1);
  h5::File readonly = h5::File::open_read(path);  // HDF5 refuses to write: that must not pass in silence
  EXPECT_NE(error_of([&] { readonly.set_attr("/", "note", std::string("x")); }).find("cannot write attribute /:note"),
            std::string::npos);
}

TEST(Integrity, AStaleErrnoIsNotReportedAsAFullDisk) {
  const fs::path path = final_file("integrity_errno", 1);
  h5::File f = h5::File::open_rw(path);
  errno = ENOSPC;  // left behind by something earlier that was handled
  const std::string e = error_of([&] { f.set_attr("/no/such/group", "x", int64_t{1}); });
  EXPECT_NE(e.find("no object /no/such/group"), std::string::npos) << e;
  EXPECT_EQ(e.find("disk is full"), std::string::npos) << e;
}

TEST(Integrity, ReopenDiscardsTheScoreRowsOfAnInterruptedPass) {
  const fs::path path = test::scratch_dir("integrity_reopen") / "out.h5";
  {
    LayoutWriter w(path, layout(), static_cast<int64_t>(2 * kValuesPerExample), /*external_attention=*/true);
    w.append(block(0, false));  // an earlier finishing pass, killed after appending
  }
  {
    LayoutWriter w = LayoutWriter::reopen(path, layout());
    w.append(block(0, false));
    w.file().set_attr("/", "format", std::string(kFormatName));
    w.file().set_attr("/", "format_version", kFormatVersion);
  }
  const LayoutReader r(path);
  EXPECT_EQ(r.examples(), 2u);
  EXPECT_EQ(r.file().dims("scores/det/out/values"), (std::vector<uint64_t>{2, 1, 2}));
  EXPECT_EQ(r.file().dims("scores/det/out/baseline"), (std::vector<uint64_t>{2, 1}));  // [examples, layers]
}

TEST(Integrity, AFailedCommitLeaksNoFileDescriptor) {
  const fs::path out = test::scratch_dir("integrity_fd_commit") / "out.h5";
  const std::size_t before = open_fds();
  {
    std::ostringstream log;
    OutputSession s(out, "test");
    ASSERT_TRUE(s.begin(identity(), layout(), false, log));
    s.plan_attention({}, log);  // no plan: attention waits in a spill file
    const std::vector<uint8_t> bytes(2 * kValuesPerExample * 4, 0);
    s.write_attention(0, 0, bytes.data(), bytes.size());
    LayoutChunk c = block(0, false);
    c.scores.clear();  // the append fails: scores missing
    EXPECT_THROW(s.commit(0, 2, std::move(c)), Error);
  }
  EXPECT_EQ(open_fds(), before);
}

TEST(Integrity, AFailedRebuildLeaksNoFileDescriptor) {
  const fs::path tmp = test::scratch_dir("integrity_fd_rebuild") / "out.h5.tmp";
  std::ofstream(tmp) << "not HDF5 and far too short for its attention";
  const std::size_t before = open_fds();
  std::ostringstream log;
  EXPECT_THROW(reopen_or_rebuild(tmp, layout(), 1000, 4096, log), Error);
  EXPECT_EQ(open_fds(), before);
}

TEST(Integrity, ResumeRedoesADamagedBlockPart) {
  const fs::path out = test::scratch_dir("integrity_part") / "out.h5";
  std::ostringstream log;
  {
    OutputSession s(out, "test");
    ASSERT_TRUE(s.begin(identity(), layout(), false, log));
    s.plan_attention({}, log);
    for (uint64_t b = 0; b < 2; ++b) s.commit(b, 2, block(b, true));
  }  // killed
  const fs::path part = parts_dir(out) / block_name(1);
  fs::resize_file(part, fs::file_size(part) / 2);
  OutputSession s(out, "test");
  ASSERT_TRUE(s.begin(identity(), layout(), false, log));
  EXPECT_EQ(s.committed(), (std::set<uint64_t>{0})) << log.str();
  EXPECT_NE(log.str().find("note: " + part.string() + ": damaged ("), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("; redoing block 1"), std::string::npos) << log.str();
  EXPECT_FALSE(fs::exists(part));
}

TEST(Integrity, ResumeRedoesBlocksWhoseAttentionInTheTmpFileFailsItsChecksum) {
  const fs::path out = test::scratch_dir("integrity_tmp") / "out.h5";
  AttentionPlan plan;
  for (uint64_t b = 0; b < 3; ++b) plan.block_start[b] = b * 2 * kValuesPerExample;
  plan.total_values = 3 * 2 * kValuesPerExample;
  const std::vector<float> uniform(2 * kValuesPerExample, 1.0f / kTokens);
  std::ostringstream log;
  {
    OutputSession s(out, "test");
    ASSERT_TRUE(s.begin(identity(), layout(), false, log));
    s.plan_attention(plan, log);
    for (uint64_t b = 0; b < 2; ++b) {
      s.write_attention(b, 0, reinterpret_cast<const uint8_t*>(uniform.data()), uniform.size() * 4);
      s.commit(b, 2, block(b, false));
    }
  }  // killed; then the attention of block 1 is damaged on disk
  uint64_t at = 0;
  {
    std::ifstream note(parts_dir(out) / "attention.txt");
    uint64_t total = 0;
    note >> total >> at;
  }
  flip(fs::path(out.string() + ".tmp"), static_cast<long>(at + 2 * kValuesPerExample * 4 + 16), 32);
  OutputSession s(out, "test");
  ASSERT_TRUE(s.begin(identity(), layout(), false, log));
  s.plan_attention(plan, log);
  EXPECT_EQ(s.committed(), (std::set<uint64_t>{0}));
  EXPECT_NE(log.str().find("fails its checksum (damaged); redoing block 1"), std::string::npos) << log.str();
  for (uint64_t b = 1; b < 3; ++b) {  // the redone block and the one never committed
    s.write_attention(b, 0, reinterpret_cast<const uint8_t*>(uniform.data()), uniform.size() * 4);
    s.commit(b, 2, block(b, false));
  }
  s.finish(6, log);
  const CheckReport r = check_layout_file(out);
  EXPECT_TRUE(r.ok()) << r.problems.front();
  EXPECT_EQ(r.rows_checked, 3u * 2 * 2 * kTokens);
}

TEST(Integrity, ALostIdentityFileNamesOverwrite) {
  const fs::path out = test::scratch_dir("integrity_identity") / "out.h5";
  std::ostringstream log;
  {
    OutputSession s(out, "test");
    ASSERT_TRUE(s.begin(identity(), layout(), false, log));
    s.commit(0, 2, block(0, true));
  }
  fs::remove(parts_dir(out) / "identity.txt");
  OutputSession s(out, "test");
  const std::string e = error_of([&] { s.begin(identity(), layout(), false, log); });
  EXPECT_NE(e.find("identity.txt: missing"), std::string::npos) << e;
  EXPECT_NE(e.find("Pass --overwrite to discard them and start this output over"), std::string::npos) << e;
}

}  // namespace

TEST(Integrity, CharacterOffsetsOutsideTheirSentenceAreNamed) {
  const fs::path path = final_file("integrity_char_offsets", 1);
  ASSERT_TRUE(check_layout_file(path).ok());
  {
    h5::File f = h5::File::open_rw(path);
    auto end = f.read<int64_t>("tokens/char_end", 0, f.length("tokens/char_end"));
    end[1] = 3;  // token 1 of example 0, in sentence_a "a" (one character); -1/-1 before
    auto start = f.read<int64_t>("tokens/char_start", 0, f.length("tokens/char_start"));
    start[1] = 0;
    end[2] = 0;  // token 2: start -1, end 0
    f.resize("tokens/char_end", 0);
    f.append("tokens/char_end", end);
    f.resize("tokens/char_start", 0);
    f.append("tokens/char_start", start);
  }
  const CheckReport bad = check_layout_file(path);
  ASSERT_FALSE(bad.ok());
  std::string all;
  for (const auto& p : bad.problems) all += p + "\n";
  EXPECT_NE(all.find("example 0, token 1: tokens/char_start, char_end (0, 3) outside its sentence (1 characters)"),
            std::string::npos) << all;
  EXPECT_NE(all.find("example 0, token 2: tokens/char_start, char_end (-1, 0)"), std::string::npos) << all;
}
