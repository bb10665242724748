#pragma once
// `attnscan heads FILE --relations`: the table of analysis/relation_heads.hpp (Clark et al.'s syntax
// heads against the best fixed-offset baseline).
#include <cstdint>
#include <ostream>
#include <string>

namespace attnscan::cli {

// Relations with at least `min_words` scored words, most words first; format table, csv or json.
void print_relation_heads(const std::string& file, int64_t min_words, const std::string& format, std::ostream& out);

}  // namespace attnscan::cli
