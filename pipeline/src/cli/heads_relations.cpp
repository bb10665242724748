#include "cli/heads_relations.hpp"

#include <iomanip>
#include <nlohmann/json.hpp>

#include "analysis/relation_heads.hpp"

namespace attnscan::cli {

void print_relation_heads(const std::string& file, int64_t min_words, const std::string& format, std::ostream& out) {
  const auto rows = analysis::relation_heads(analysis::ResultFile(file), min_words);
  if (format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows)
      j.push_back({{"detector", r.detector}, {"relation", r.relation}, {"direction", r.direction}, {"words", r.words},
                   {"layer", r.layer}, {"head", r.head}, {"accuracy", r.accuracy}, {"best_offset", r.best_offset},
                   {"offset_correct", r.offset_correct}, {"offset_baseline", r.baseline},
                   {"difference", r.accuracy - r.baseline}});
    out << nlohmann::json({{"file", file}, {"indexing", "layer and head are 0-indexed"}, {"min_words", min_words},
                           {"relations", j}})
               .dump(2)
        << "\n";
  } else if (format == "csv") {
    out << "detector,relation,direction,words,layer,head,accuracy,best_offset,offset_baseline,difference\n";
    out << std::setprecision(6);
    for (const auto& r : rows)
      out << r.detector << "," << r.relation << "," << r.direction << "," << r.words << "," << r.layer << "," << r.head
          << "," << r.accuracy << "," << r.best_offset << "," << r.baseline << "," << r.accuracy - r.baseline << "\n";
  } else {
    out << "best head per relation and direction (layer-head, 0-indexed) against Clark et al.'s best fixed-offset "
           "baseline; relations with at least "
        << min_words << " words\n\n";
    out << "relation    direction     words  head   accuracy  offset  baseline  difference\n";
    for (const auto& r : rows)
      out << std::left << std::setw(11) << r.relation << " " << std::setw(12) << r.direction << std::right << " "
          << std::setw(6) << r.words << "  " << std::setw(2) << r.layer << "-" << std::left << std::setw(3) << r.head
          << std::right << std::fixed << std::setprecision(3) << " " << std::setw(9) << r.accuracy << "  " << std::showpos
          << std::setw(6) << r.best_offset << std::noshowpos << "  " << std::setw(8) << r.baseline << "  "
          << std::showpos << std::setw(10) << r.accuracy - r.baseline << std::noshowpos << "\n";
    if (rows.empty()) out << "(no relation has " << min_words << " words; lower --min-words)\n";
  }
}

}  // namespace attnscan::cli
