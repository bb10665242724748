// `attnscan compare A.h5 B.h5` (paired, per head) and `attnscan compare RESULT.h5 --by label`.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/compare.hpp"
#include "common/error.hpp"
#include "cli/commands.hpp"
#include "cli/positional.hpp"

namespace po = boost::program_options;

namespace attnscan::cli {

namespace {

nlohmann::json number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

// The rows to print: the top K per detector output (rows come sorted by effect size), those with q < Q.
std::vector<const analysis::CompareRow*> shown(const analysis::Comparison& c, int top, double q_max) {
  std::vector<std::string> outputs;  // in the order the file lists them
  std::map<std::string, std::vector<const analysis::CompareRow*>> by_output;
  for (const auto& r : c.rows) {
    const std::string key = r.detector + "/" + r.output;
    if (!by_output.count(key)) outputs.push_back(key);
    auto& list = by_output[key];
    if (q_max > 0 && !(r.q < q_max)) continue;
    if (top > 0 && static_cast<int>(list.size()) >= top) continue;
    list.push_back(&r);
  }
  std::vector<const analysis::CompareRow*> rows;
  for (const auto& key : outputs) rows.insert(rows.end(), by_output[key].begin(), by_output[key].end());
  return rows;
}

void print_json(const analysis::Comparison& c, const std::vector<const analysis::CompareRow*>& rows) {
  nlohmann::json heads = nlohmann::json::array();
  for (const auto* r : rows) {
    const auto& t = r->test;
    heads.push_back({{"detector", r->detector}, {"output", r->output}, {"layer", r->layer}, {"head", r->head},
                     {"n", t.n}, {"mean_a", number(t.mean_a)}, {"mean_b", number(t.mean_b)}, {"effect", number(t.effect)},
                     {"ci_low", number(t.ci_low)}, {"ci_high", number(t.ci_high)}, {"t", number(t.t)}, {"df", number(t.df)},
                     {"p", number(t.p)}, {"p_permutation", number(t.p_permutation)}, {"resamples", t.resamples_used},
                     {"standardized", number(t.standardized)}, {"q", number(r->q)}, {"why_nan", t.why_nan}});
  }
  std::cout << nlohmann::json({{"kind", c.kind}, {"a", c.a}, {"b", c.b}, {"heads_note", c.heads_note}, {"method", c.method},
                               {"indexing", "layer and head are 0-indexed"}, {"tests", c.rows.size()}, {"heads", heads}})
                   .dump(2)
            << "\n";
}

void print_csv(const analysis::Comparison& c, const std::vector<const analysis::CompareRow*>& rows) {
  std::cout << "detector,output,layer,head,n,mean_a,mean_b,effect,ci_low,ci_high,t,df,p,p_permutation,resamples,standardized,q,"
               "method\n";
  for (const auto* r : rows) {
    const auto& t = r->test;
    std::cout << std::setprecision(9) << r->detector << "," << r->output << "," << r->layer << "," << r->head << "," << t.n
              << "," << t.mean_a << "," << t.mean_b << "," << t.effect << "," << t.ci_low << "," << t.ci_high << "," << t.t
              << "," << t.df << "," << t.p << "," << t.p_permutation << "," << t.resamples_used << "," << t.standardized
              << "," << r->q << ",\""
              << c.method << "\"\n";
  }
}

// A p-value as the table prints it: scientific, or what it is below where it sits at its resolution, so that a
// table never shows 0: "<1.0e-300" for a t-based p that underflowed, "<1.0e-03" for a permutation p of
// (0 + 1) / (R + 1) (no resample as extreme: the truth is below 1 / (R + 1)).
std::string p_text(double p, double floor) {
  char text[32];
  if (!std::isnan(p) && p <= floor * (1 + 1e-9)) {
    std::snprintf(text, sizeof text, "<%.1e", std::max(floor, 1e-300));
    return text;
  }
  std::snprintf(text, sizeof text, "%.2e", p);
  return text;
}

void print_table(const analysis::Comparison& c, const std::vector<const analysis::CompareRow*>& rows, double q_mark,
                 int resamples) {
  const double perm_floor = 1.0 / (static_cast<double>(resamples) + 1);
  const bool corr = c.kind == "correlation";
  std::cout << (c.kind == "paired" ? "A = " + c.a + "\nB = " + c.b : corr ? std::string("score vs label") : "A = label " + c.a + ", B = label " + c.b)
            << "\n" << c.method << "\n" << (c.heads_note.empty() ? "" : c.heads_note + "\n")
            << "layer-head 0-indexed; * = q < " << q_mark
            << (corr ? "" : "; p perm \"" + p_text(perm_floor, perm_floor) + "\": none of " + std::to_string(resamples) +
                                " resamples as extreme (p below 1/" + std::to_string(resamples + 1) + "); \"~\": stopped early")
            << "\n";
  std::string last;
  for (const auto* r : rows) {
    const std::string title = r->detector + "/" + r->output;
    if (title != last) {
      std::cout << "\n" << title << "\n"
                << (corr ? "  head       n      rho    95% CI              p          q\n"
                         : "  head       n   mean A   mean B   effect   95% CI              p          p perm     " +
                               std::string(c.kind == "paired" ? "d_z" : "g  ") + "     q\n");
      last = title;
    }
    const auto& t = r->test;
    std::cout << "  " << std::setw(2) << r->layer << "-" << std::left << std::setw(3) << r->head << std::right << std::setw(8)
              << t.n << std::fixed << std::setprecision(4);
    if (!corr) std::cout << " " << std::setw(8) << t.mean_a << " " << std::setw(8) << t.mean_b;
    std::cout << " " << std::setw(8) << t.effect << "  [" << std::setw(7) << t.ci_low << ", " << std::setw(7) << t.ci_high << "]"
              << "  " << std::setw(9) << p_text(t.p, 0);
    if (!corr) {
      const bool stopped = t.resamples_used > 0 && t.resamples_used < resamples;
      std::cout << "  " << std::setw(9) << (stopped ? "~" : "") + p_text(t.p_permutation, perm_floor) << std::fixed
                << std::setprecision(3) << "  " << std::setw(6) << t.standardized;
    }
    std::cout << "  " << std::setw(9) << p_text(r->q, 0) << (r->q < q_mark ? " *" : "")
              << (t.why_nan.empty() ? "" : "  (" + t.why_nan + ")") << std::defaultfloat << "\n";
  }
}

// With --q: a sentence for each detector output where no head passed, so an empty table is never bare.
void print_none_passed(const analysis::Comparison& c, const std::vector<const analysis::CompareRow*>& rows, double q) {
  std::vector<std::string> outputs, passed;
  for (const auto& r : c.rows)
    if (outputs.empty() || outputs.back() != r.detector + "/" + r.output) outputs.push_back(r.detector + "/" + r.output);
  for (const auto* r : rows) passed.push_back(r->detector + "/" + r->output);
  if (rows.empty()) {
    std::cout << "\nNo head has Benjamini-Hochberg q < " << q << " in any detector output (" << c.rows.size()
              << " heads tested).\n";
    return;
  }
  for (const auto& o : outputs)
    if (std::find(passed.begin(), passed.end(), o) == passed.end())
      std::cout << "\n" << o << ": no head has q < " << q << ".\n";
}

}  // namespace

int compare_command(const std::vector<std::string>& args) {
  analysis::CompareOptions o;
  std::string by, format = "table", groups;
  int top = 5;
  double q = 0;
  po::options_description opts("attnscan compare A.h5 B.h5 | RESULT.h5 --by label: per-head tests with FDR control");
  opts.add_options()("help,h", "show this help")("by", po::value(&by), "label: two label groups of one file")(
      "groups", po::value(&groups), "A,B: the label groups (default: the two largest)")(
      "resamples", po::value(&o.resamples)->default_value(1000), "permutation resamples (and bootstrap draws); >= 100")(
      "seed", po::value(&o.seed)->default_value(1), "seed of the resampling (results are reproducible)")(
      "stop-above", po::value(&o.stop_above)->default_value(0.05),
      "end a head's permutations once its p is certain to exceed this (Besag-Clifford; 0: all resamples)")(
      "ci", po::value(&o.ci)->default_value("normal"), "normal (t-based) or bootstrap (percentile)")(
      "top", po::value(&top)->default_value(5), "rows per detector output, by effect size (0: all)")(
      "q", po::value(&q)->default_value(0), "only heads with Benjamini-Hochberg q below this (0: no filter)")(
      "format", po::value(&format)->default_value("table"), "table, csv or json")(
      "threads", po::value(&o.threads)->default_value(0), "heads tested at once (0: all cores; results do not depend on it)");
  std::vector<std::string> files;
  const auto vm = parse_with_files(args, opts, files, 2);
  if (vm.count("help")) {
    std::cout << opts << "\nSee docs/statistics.md for the tests and how they were checked.\n";
    return 0;
  }
  if (format != "table" && format != "csv" && format != "json") throw Error("--format " + format + ": expected table, csv or json");
  if (o.ci != "normal" && o.ci != "bootstrap") throw Error("--ci " + o.ci + ": expected normal or bootstrap");
  if (o.threads < 0) throw Error("--threads " + std::to_string(o.threads) + ": expected 0 (all cores) or more");
  if (!(o.stop_above >= 0 && o.stop_above < 1))
    throw Error("--stop-above " + std::to_string(o.stop_above) + ": expected 0 (never stop) up to below 1");
  if (o.resamples < 100) throw Error("--resamples " + std::to_string(o.resamples) + ": use at least 100 (p-values below 1/(R+1) cannot show)");
  o.groups = group_pair(groups);
  analysis::Comparison c;
  if (by == "label" && files.size() == 1) {
    c = analysis::compare_label_groups(analysis::ResultFile(files[0]), o);
  } else if (by.empty() && files.size() == 2) {
    c = analysis::compare_files(analysis::ResultFile(files[0]), analysis::ResultFile(files[1]), o);
  } else {
    throw Error("usage: attnscan compare A.h5 B.h5 [options]  or  attnscan compare RESULT.h5 --by label [options]");
  }
  const auto rows = shown(c, top, q);
  if (format == "json") print_json(c, rows);
  else if (format == "csv") print_csv(c, rows);
  else print_table(c, rows, q > 0 ? q : 0.05, o.resamples);
  if (format == "table" && q > 0) print_none_passed(c, rows, q);
  return 0;
}

}  // namespace attnscan::cli
