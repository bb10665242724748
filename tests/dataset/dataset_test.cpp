// Dataset readers: every file of ../shared/datasets read as its README describes, and every kind of
// bad row as a located error or, with on_bad_row skip, counted and reported.
#include <gtest/gtest.h>

#include <fstream>

#include "dataset/dataset.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

struct ReadResult {
  std::vector<PairRecord> records;
  std::vector<RejectedRow> rejected;
  uint64_t read = 0, skipped = 0;
};

ReadResult read_all(const DatasetSpec& spec) {
  ReadResult r;
  auto reader = open_dataset(spec);
  reader->on_reject([&](const RejectedRow& row) { r.rejected.push_back(row); });
  while (auto rec = reader->next()) r.records.push_back(std::move(*rec));
  r.read = reader->rows_read();
  r.skipped = reader->rows_skipped();
  return r;
}

std::string read_error(const DatasetSpec& spec) {
  try {
    read_all(spec);
  } catch (const DatasetError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

fs::path write_file(const std::string& dir, const std::string& name, const std::string& bytes) {
  auto path = test::scratch_dir(dir) / name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

DatasetSpec tsv(const fs::path& path, bool header = true) {
  DatasetSpec s;
  s.path = path;
  s.header = header;
  s.sentence_a = header ? ColumnRef{"a", -1} : ColumnRef{"", 0};
  s.sentence_b = header ? ColumnRef{"b", -1} : ColumnRef{"", 1};
  return s;
}

#define SKIP_WITHOUT_DATASETS()                                                                  \
  if (!fs::exists(test::datasets_dir())) GTEST_SKIP() << "../shared/datasets not found at " << test::datasets_dir()

}  // namespace

TEST(SharedDatasets, StsbRawSplitOnTabsWithoutQuoting) {
  SKIP_WITHOUT_DATASETS();
  const std::pair<const char*, std::size_t> splits[] = {{"sts-train.csv", 5749}, {"sts-dev.csv", 1500}, {"sts-test.csv", 1379}};
  for (auto [file, count] : splits) {
    DatasetSpec s;
    s.path = test::datasets_dir() / "stsb" / file;
    s.header = false;
    s.sentence_a.index = 5;
    s.sentence_b.index = 6;
    s.id.index = 3;
    s.label.index = 4;
    s.label_type = LabelType::Number;
    auto r = read_all(s);
    EXPECT_EQ(r.records.size(), count) << file;
    EXPECT_EQ(r.skipped, 0u) << file;
    if (std::string(file) == "sts-train.csv") {
      EXPECT_EQ(r.records[0].a, "A plane is taking off.");
      EXPECT_DOUBLE_EQ(*r.records[0].label_value, 5.0);
      EXPECT_NE(r.records[2918].a.find('\x12') + r.records[2918].b.find('\x12'), 2 * std::string::npos)
          << "line 2919 keeps its control character";
      EXPECT_EQ(r.records[2918].source_row, 2919u);
    }
  }
}

TEST(SharedDatasets, StsbGlueFormatByColumnName) {
  SKIP_WITHOUT_DATASETS();
  DatasetSpec s;
  s.path = test::datasets_dir() / "stsb/glue_format/train.tsv";
  s.sentence_a.name = "sentence1";
  s.sentence_b.name = "sentence2";
  s.id.name = "index";
  s.label.name = "score";
  s.label_type = LabelType::Number;
  auto r = read_all(s);
  EXPECT_EQ(r.records.size(), 5749u);
  EXPECT_EQ(r.records.back().source_row, 5750u);
}

TEST(SharedDatasets, PawsWithCrlfLabels) {
  SKIP_WITHOUT_DATASETS();
  for (const char* split : {"dev.tsv", "test.tsv"}) {
    DatasetSpec s;
    s.path = test::datasets_dir() / "paws" / split;
    s.sentence_a.name = "sentence1";
    s.sentence_b.name = "sentence2";
    s.id.name = "id";
    s.label.name = "label";
    s.label_type = LabelType::Number;
    auto r = read_all(s);
    EXPECT_EQ(r.records.size(), 8000u);
    for (const auto& rec : r.records) ASSERT_TRUE(*rec.label == "0" || *rec.label == "1") << rec.source_row;
  }
}

TEST(SharedDatasets, SnliParallelFiles) {
  SKIP_WITHOUT_DATASETS();
  DatasetSpec s;
  s.format = DatasetFormat::Parallel;
  s.s1 = test::datasets_dir() / "snli/s1.dev";
  s.s2 = test::datasets_dir() / "snli/s2.dev";
  s.labels = test::datasets_dir() / "snli/labels.dev";
  auto r = read_all(s);
  EXPECT_EQ(r.records.size(), 9842u);
  EXPECT_EQ(r.records[0].a, "Two women are embracing while holding to go packages . ");
  EXPECT_TRUE(*r.records[0].label == "entailment" || *r.records[0].label == "neutral" ||
              *r.records[0].label == "contradiction");
}

TEST(Readers, BomCrlfAndMissingFinalNewline) {
  auto path = write_file("rd_bom", "x.tsv", "\xEF\xBB\xBF" "a\tb\r\nhello\tworld\r\nlast\tline");
  auto r = read_all(tsv(path));
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[0].a, "hello");
  EXPECT_EQ(r.records[1].b, "line");
  EXPECT_EQ(r.records[1].source_row, 3u);
  EXPECT_EQ(r.records[1].id, "3");
}

TEST(Readers, Rfc4180QuotingWithDelimitersQuotesAndNewlines) {
  auto path = write_file("rd_csv", "x.csv", "a,b,label\n\"x, y\",\"he said \"\"hi\"\"\",1\n\"multi\nline\",b2,0\nplain,\"q\",1\n");
  auto s = tsv(path);
  s.delimiter = ',';
  s.quoting = Quoting::Rfc4180;
  s.label.name = "label";
  auto r = read_all(s);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].a, "x, y");
  EXPECT_EQ(r.records[0].b, "he said \"hi\"");
  EXPECT_EQ(r.records[1].a, "multi\nline");
  EXPECT_EQ(r.records[1].source_row, 3u);
  EXPECT_EQ(r.records[2].source_row, 5u);
}

TEST(ReaderErrors, EachBadRowIsLocated) {
  auto path = write_file("rd_bad", "x.tsv",
                         "a\tb\tscore\n"
                         "ok\tfine\t1.5\n"
                         "too\tfew\n"             // line 3
                         "bad\xC3\tutf\t1\n"      // line 4
                         "  \tempty\t1\n"         // line 5
                         "x\ty\tfive\n"           // line 6
                         "good\tagain\t2\n");
  auto s = tsv(path);
  s.label.name = "score";
  s.label_type = LabelType::Number;
  const std::string f = path.string();
  EXPECT_EQ(read_error(s), f + ":3: expected 3 fields as in the header, found 2");
  s.on_bad_row = BadRowPolicy::Skip;
  auto r = read_all(s);
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.read, 6u);
  EXPECT_EQ(r.skipped, 4u);
  ASSERT_EQ(r.rejected.size(), 4u);
  EXPECT_EQ(r.rejected[0].message(), f + ":3: expected 3 fields as in the header, found 2");
  EXPECT_EQ(r.rejected[1].message(), f + ":4: sentence_a: invalid UTF-8 at byte 3");
  EXPECT_EQ(r.rejected[2].message(), f + ":5: sentence_a: empty sentence");
  EXPECT_EQ(r.rejected[3].message(), f + ":6: label: cannot parse 'five' as a number");
}

TEST(ReaderErrors, HeaderAndColumnProblems) {
  auto path = write_file("rd_cols", "x.tsv", "s1\ts2\nx\ty\n");
  auto s = tsv(path);
  EXPECT_EQ(read_error(s), path.string() + ":1: sentence_a: no column 'a' in the header (columns: s1, s2)");
  auto noheader = tsv(path, false);
  noheader.sentence_b.index = 4;
  EXPECT_EQ(read_error(noheader), path.string() + ":1: expected at least 5 fields, found 2");
  noheader.sentence_b = ColumnRef{"s2", -1};
  EXPECT_NE(read_error(noheader).find("chosen by name but the file has no header"), std::string::npos);
}

TEST(ReaderErrors, UnterminatedQuoteAndStrayCharacters) {
  auto path = write_file("rd_quote", "x.csv", "a,b\n\"open,b\nnext,row\n");
  auto s = tsv(path);
  s.delimiter = ',';
  s.quoting = Quoting::Rfc4180;
  EXPECT_EQ(read_error(s), path.string() + ":2: quoted field opened here is never closed");
  auto stray = write_file("rd_stray", "x.csv", "a,b\n\"x\"y,b\n");
  s.path = stray;
  EXPECT_EQ(read_error(s), stray.string() + ":2: field 1: unexpected character after a closing quote");
}

TEST(Readers, JsonLines) {
  auto path = write_file("rd_jsonl", "x.jsonl",
                         "{\"s1\": \"hello\", \"s2\": \"world\", \"id\": 7, \"y\": 0.5}\n"
                         "not json\n"
                         "{\"s1\": \"only one\"}\n"
                         "{\"s1\": 3, \"s2\": \"x\"}\n"
                         "{\"s1\": \"a\", \"s2\": \"b\"}");
  DatasetSpec s;
  s.format = DatasetFormat::Jsonl;
  s.path = path;
  s.sentence_a.name = "s1";
  s.sentence_b.name = "s2";
  s.id.name = "id";
  s.label.name = "y";
  s.label_type = LabelType::Number;
  EXPECT_EQ(read_error(s).rfind(path.string() + ":2: invalid JSON", 0), 0u);
  s.on_bad_row = BadRowPolicy::Skip;
  auto r = read_all(s);
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[0].id, "7");
  EXPECT_DOUBLE_EQ(*r.records[0].label_value, 0.5);
  EXPECT_EQ(r.records[1].id, "5");
  ASSERT_EQ(r.rejected.size(), 3u);
  EXPECT_EQ(r.rejected[1].message(), path.string() + ":3: missing field 's2'");
  EXPECT_EQ(r.rejected[2].message(), path.string() + ":4: field 's1' is a number, expected text");
}

TEST(ReaderErrors, ParallelFilesOfUnequalLength) {
  auto dir = test::scratch_dir("rd_par");
  std::ofstream(dir / "s1") << "a\nb\nc\n";
  std::ofstream(dir / "s2") << "x\ny\n";
  DatasetSpec s;
  s.format = DatasetFormat::Parallel;
  s.s1 = dir / "s1";
  s.s2 = dir / "s2";
  s.on_bad_row = BadRowPolicy::Skip;  // not a row problem: never skipped
  EXPECT_EQ(read_error(s), (dir / "s2").string() + ":3: file ends after 2 lines but " + (dir / "s1").string() +
                               " has more: parallel files must have equal line counts");
}
