#pragma once
// Word matching shared by the *_match detectors: `exact` compares lowercased whole words, `stem`
// compares their Snowball English stems. Standard C++ plus libstemmer (Debian libstemmer-dev).
#include <libstemmer.h>

#include <cctype>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnscan/detector.hpp"

namespace attnscan_plugins {

inline std::string lower_ascii(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One key per token (empty for tokens that are not content: template and in-text specials). A stemmer is made per call: libstemmer objects are
// not thread-safe and score() runs concurrently.
inline std::vector<std::string> word_keys(const attnscan::sdk::Example& e, bool stem) {
  std::unique_ptr<sb_stemmer, decltype(&sb_stemmer_delete)> stemmer(nullptr, &sb_stemmer_delete);
  if (stem) {
    stemmer.reset(sb_stemmer_new("english", "UTF_8"));
    if (!stemmer) throw std::runtime_error("libstemmer has no english stemmer");
  }
  std::vector<std::string> keys;
  for (const auto& t : e.tokens) {
    if (!t.is_content()) {
      keys.emplace_back();
      continue;
    }
    std::string w = lower_ascii(t.word);
    if (stem) {
      const sb_symbol* s = sb_stemmer_stem(stemmer.get(), reinterpret_cast<const sb_symbol*>(w.data()), static_cast<int>(w.size()));
      w.assign(reinterpret_cast<const char*>(s), static_cast<std::size_t>(sb_stemmer_length(stemmer.get())));
    }
    keys.push_back(std::move(w));
  }
  return keys;
}

inline bool parse_match(const attnscan::sdk::Params& p) {
  const auto m = attnscan::sdk::param<std::string>(p, "match");
  if (m != "exact" && m != "stem") throw std::invalid_argument("match must be exact or stem, got '" + m + "'");
  return m == "stem";
}

inline attnscan::sdk::ParamSpec match_param() {
  return {"match", attnscan::sdk::ParamType::String, std::string("exact"),
          "exact: lowercased whole words are equal; stem: their Snowball English stems are equal"};
}

}  // namespace attnscan_plugins
