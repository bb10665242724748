#pragma once
// Everything the HTML report shows, as one JSON document: the aggregates of every detector output,
// the top heads with the examples that show them most strongly, label groups, and the tokens and
// attention of only the examples on the page (so its size does not grow with the file).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/result_file.hpp"

namespace attnscan::report {

using analysis::ExampleView;
using analysis::ResultFile;

struct ReportOptions {
  std::size_t top = 3;       // top heads per detector output
  std::size_t examples = 3;  // examples per top head
  bool by_label = false;     // require label sections (they appear whenever the file has labels)
  int bins = 0;              // bins for a continuous label (without: no label sections, and a note)
  std::vector<std::string> groups;  // the two label groups of the difference heatmap (default: the two largest)
  std::filesystem::path compare;    // a second result file on the same examples: difference heatmaps A - B
  int64_t min_words = 20;           // syntax heads: relations with at least this many words
};

nlohmann::json report_data(const ResultFile& file, const ReportOptions& options);

// Attention quantised to 0..255 per weight, base64: [stored layer][stored head][query][key] (also the
// norm-weighted maps of the same shape, and the rollout [model layer][query][key]).
std::string encode_attention(const std::vector<float>& attention);

}  // namespace attnscan::report
