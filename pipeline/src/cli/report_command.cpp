// `attnscan report RESULT.h5 -o report.html`: one self-contained HTML page that shows what the file
// found, pattern by pattern, with BertViz-style head and model views.
#include <boost/program_options.hpp>
#include <chrono>
#include <iostream>
#include <sstream>

#include "common/error.hpp"
#include "cli/commands.hpp"
#include "cli/positional.hpp"
#include "report/html_page.hpp"
#include "report/report_data.hpp"

namespace po = boost::program_options;

namespace attnscan::cli {

int report_command(const std::vector<std::string>& args) {
  std::string file, output, by, groups, title;
  report::ReportOptions o;
  po::options_description opts("attnscan report RESULT.h5 -o report.html: an offline HTML report of a result file");
  opts.add_options()("help,h", "show this help")("output,o", po::value(&output), "the HTML file (default RESULT.html)")(
      "top", po::value(&o.top)->default_value(3), "top heads per detector output, each shown on its examples")(
      "examples", po::value(&o.examples)->default_value(3), "examples per top head (highest per-example score)")(
      "by", po::value(&by), "label: require the label sections (shown whenever the file has labels)")(
      "bins", po::value(&o.bins)->default_value(0), "K equal-width bins for a continuous label")(
      "groups", po::value(&groups), "A,B: the label groups of the difference heatmaps (default: the two largest)")(
      "title", po::value(&title), "page title (default: the file name)")(
      "min-words", po::value(&o.min_words)->default_value(20), "syntax heads: only relations with at least N words")(
      "compare", po::value(&o.compare), "B.h5: the same examples through another model or configuration; "
                                        "difference heatmaps A - B with significant heads marked");
  std::vector<std::string> files;
  const auto vm = parse_with_files(args, opts, files, 1);
  if (!files.empty()) file = files[0];
  if (vm.count("help")) {
    std::cout << opts << "\nThe page needs no network: every script, style and datum is inside it. See docs/report.md.\n";
    return 0;
  }
  if (file.empty()) throw Error("usage: attnscan report RESULT.h5 -o report.html [--top K] [--examples K]");
  if (!by.empty() && by != "label") throw Error("--by " + by + ": only 'label' is supported");
  o.by_label = !by.empty();
  o.groups = group_pair(groups);
  if (output.empty()) output = std::filesystem::path(file).replace_extension(".html").string();
  const auto t0 = std::chrono::steady_clock::now();
  const analysis::ResultFile result(file);
  const auto data = report::report_data(result, o);
  const std::string page = report::render_page(data, title.empty() ? std::filesystem::path(file).filename().string() : title);
  report::write_file_atomically(output, page);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "wrote " << output << " (" << page.size() / 1024 << " KiB, " << data["examples"].size()
            << " example(s) shown, " << result.examples() << " pairs summarised) in " << secs << " s\n";
  return 0;
}

}  // namespace attnscan::cli
