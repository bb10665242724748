#pragma once
// `attnscan heads FILE --relations`: per dependency relation and direction, the head whose most-attended
// word is most often the gold one (corpus accuracy over the relation's words), beside Clark et al.'s
// best fixed-offset baseline stored with the scores (store/offset_baselines.hpp).
#include <cstdint>
#include <ostream>
#include <string>

namespace attnscan::cli {

// Relations with at least `min_words` scored words, most words first; format table, csv or json.
void print_relation_heads(const std::string& file, int64_t min_words, const std::string& format, std::ostream& out);

}  // namespace attnscan::cli
