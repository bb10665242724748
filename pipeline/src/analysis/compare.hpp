#pragma once
// `attnscan compare`: per detector output and (layer, head), two files paired by example (two models
// or configurations on one dataset), or two label groups of one file (a continuous label: Spearman's
// rho of score and label). Benjamini-Hochberg q over every test of the comparison.
#include <string>
#include <vector>

#include "analysis/result_file.hpp"
#include "analysis/statistics.hpp"

namespace attnscan::analysis {

struct CompareOptions {
  int resamples = 1000;             // permutation resamples (and bootstrap draws with ci = bootstrap)
  uint64_t seed = 1;
  double stop_above = 0.05;         // sequential stopping of each test's permutations (stats::Resampling; 0: never)
  std::string ci = "normal";        // normal (t-based) or bootstrap (percentile, over examples)
  std::vector<std::string> groups;  // label comparison: the two groups A, B (default: the two largest)
  int threads = 0;                  // heads tested at once (0: every core); the results do not depend on it
};

struct CompareRow {
  std::string detector, output;
  int64_t layer = 0, head = 0;
  stats::TestResult test;
  double q = NAN;  // Benjamini-Hochberg over all rows
};

struct Comparison {
  std::string kind;         // "paired", "groups" or "correlation"
  std::string a, b;         // what is compared: files, or label groups ("label" and "score" for correlation)
  std::string heads_note;   // which heads were compared, when the files differ
  std::string method;       // tests, CI and resampling, with their parameters
  std::vector<CompareRow> rows;
};

Comparison compare_files(const ResultFile& a, const ResultFile& b, const CompareOptions& o);
Comparison compare_label_groups(const ResultFile& f, const CompareOptions& o);

}  // namespace attnscan::analysis
