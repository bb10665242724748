#pragma once
// attnscan detector SDK: everything a detector plugin needs, standard C++ only.
//
// A detector scores attention patterns. For each example of a batch it returns, per named output,
// an [L][H] score (NaN where the pattern is undefined for that example) and the score that uniform
// attention would get (the baseline). See docs/writing-a-detector.md.
//
// Values: every score and baseline is a finite float, or NaN (kUndefined) where the pattern is
// undefined. +inf and -inf are not defined values: the host refuses them, and the run stops with an
// error naming the detector, the output, the example and the layer/head (committed work is kept).
//
// Faults: by default the host runs detectors in a separate worker process, so a detector that
// crashes, calls exit() or runs longer than pipeline.detector_timeout seconds on one example ends
// the run with an error naming it and the example, and SIGINT/SIGTERM stop the run whatever a
// detector does. Do not rely on any state shared with the host process beyond what score() is given.
//
// Concurrency contract: score() is called concurrently from several threads on different batches.
// A detector may keep state set up in its constructor (parameters, tables) and read it from
// score(), but must not modify shared state there: score() is const, and anything mutable must be
// local to the call.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace attnscan::sdk {

// Bumped whenever anything in this header changes incompatibly; the host refuses other versions.
// 3: Token has a role, its sentence and the model's type_id instead of segment and special.
// 4: Example carries value_norms, and word_annotations (gold dependency heads and relations of
//    annotated datasets).
// 5: Example carries key_window (sliding-window layers); a baseline per output and layer.
// 6: key_window becomes key_ranges (causal and sliding-window layers of decoders); score_target_sets counts
//    a query only in the layers where it sees one of its targets.
inline constexpr int kApiVersion = 6;

enum class ParamType { Bool, Int, Double, String };
using ParamValue = std::variant<bool, int64_t, double, std::string>;
using Params = std::map<std::string, ParamValue>;

struct ParamSpec {
  std::string name;
  ParamType type;
  ParamValue default_value;
  std::string doc;
};

struct DetectorInfo {
  std::string name;         // plugin name used in YAML `detectors:`
  std::string version;      // detector version (stored with its scores)
  std::string description;  // one line
  std::vector<std::string> outputs;
  std::vector<ParamSpec> params;
};

// What a token is in the pair template, the same on every model family: BERT `[CLS] A [SEP] B [SEP]`
// and RoBERTa/MPNet `<s> A </s></s> B </s>` both give Begin, A..., Separator(s), B..., Separator.
enum class TokenRole : uint8_t {
  Content,        // a subword piece of sentence A or B
  Begin,          // the template's leading special, before A: [CLS] (BERT), <s> (RoBERTa, MPNet)
  Separator,      // a template special after A or after B: [SEP], </s>
  SpecialInText,  // a special token written in a sentence's text, e.g. a literal "[SEP]": it belongs to
                  // its sentence and has a word_index, but is neither a word nor a template delimiter
  Padding,        // padding; the host passes examples without their padding, so score() never sees it
};

struct Token {
  std::string text;        // the vocabulary's piece: WordPiece "##berries", byte-level BPE "Ġstraw", Unigram "▁straw"
  int32_t id = 0;
  TokenRole role = TokenRole::Content;
  uint8_t sentence = 0;    // 0: A, 1: B. Begin and the separators closing A belong to A; those after B to B
  uint8_t type_id = 0;     // the model's token type id (BERT: equals sentence; RoBERTa, MPNet: always 0)
  int32_t word_index = -1; // word within its sentence; -1 for Begin, Separator and Padding
  std::string word;        // the whole word's text (as the model sees it, e.g. lowercased)

  bool is_content() const { return role == TokenRole::Content; }  // a piece of a word of A or B
};

// The gold annotation of one word (datasets with dependency trees, e.g. CoNLL-U): its head and relation.
struct WordAnnotation {
  int32_t head = -1;     // word_index of its head word in the same sentence; -1 for the root
  std::string relation;  // dependency relation as written (DEPREL), e.g. "nsubj", "nmod:poss"
};

// The keys query i sees: i - before <= j <= i + after, each side unbounded where negative. Causal: {-1, 0};
// ModernBERT's local layers: {w, w}; Mistral's window of W keys: {W - 1, 0}.
struct KeyRange {
  int32_t before = -1, after = -1;
  bool sees(std::size_t i, std::size_t j) const {
    return (before < 0 || j + static_cast<std::size_t>(before) >= i) && (after < 0 || j <= i + static_cast<std::size_t>(after));
  }
  bool all() const { return before < 0 && after < 0; }
  bool operator==(const KeyRange& o) const { return before == o.before && after == o.after; }
};

struct Example {
  std::string id;
  std::vector<Token> tokens;          // n tokens
  // Per sentence (0: A, 1: B), one entry per word, indexed by Token::word_index. Empty for datasets
  // without annotations; when present, every word of every sentence of the example has one (a word
  // cut off by truncation keeps its entry but has no tokens).
  std::vector<std::vector<WordAnnotation>> word_annotations;
  int64_t layers = 0, heads = 0;
  const float* attention = nullptr;   // [layers][heads][n][n], query x key, rows sum to 1
  // [layers][heads][n]: ||f_h(x_j)||, the norm of key j's value vector after head h's value and output
  // projections (Kobayashi et al. 2020); null unless the run computes them (output.value_norms, or a
  // detector configured with map: norm). What `attention` holds follows the detector's `map:`
  // (docs/writing-a-detector.md): raw weights by default.
  const float* value_norms = nullptr;
  // [layers]: the keys each query of a layer sees (decoders: the keys up to it, causal; sliding-window layers:
  // a band around it); the attention outside is exactly 0. Empty, or a range unbounded on both sides, where
  // every query sees all n keys.
  std::vector<KeyRange> key_ranges;

  std::size_t size() const { return tokens.size(); }
  KeyRange keys(int64_t layer) const { return key_ranges.empty() ? KeyRange{} : key_ranges[static_cast<std::size_t>(layer)]; }
  bool sees(int64_t layer, std::size_t i, std::size_t j) const { return keys(layer).sees(i, j); }
  // How many keys query i of `layer` sees: n, or its range clipped to the sequence.
  std::size_t visible_keys(int64_t layer, std::size_t i) const {
    const KeyRange r = keys(layer);
    const std::size_t first = r.before < 0 || i < static_cast<std::size_t>(r.before) ? 0 : i - static_cast<std::size_t>(r.before);
    const std::size_t last = r.after < 0 ? size() - 1 : std::min(size() - 1, i + static_cast<std::size_t>(r.after));
    return last - first + 1;
  }
  const float* head(int64_t layer, int64_t h) const {
    return attention + (layer * heads + h) * static_cast<int64_t>(size() * size());
  }
  const float* head_value_norms(int64_t layer, int64_t h) const {
    return value_norms ? value_norms + (layer * heads + h) * static_cast<int64_t>(size()) : nullptr;
  }
};

struct ExampleScores {
  std::vector<float> scores;    // [outputs][layers][heads]
  // [outputs][layers]: the score uniform attention over the keys each query sees would get (every
  // layer the same unless some attend within a window).
  std::vector<float> baseline;
};

class Detector {
 public:
  virtual ~Detector() = default;
  // out has one entry per example, to be filled. Throw std::exception on failure.
  virtual void score(const std::vector<Example>& batch, std::vector<ExampleScores>& out) const = 0;
};

inline constexpr float kUndefined = std::numeric_limits<float>::quiet_NaN();

// The common shape of a pattern score: for query tokens i in Q_l (those that see at least one token of their
// target set T(i) in layer l), the mean over i of the attention mass on T(i). Fills scores [layers][heads] and
// baseline [layers] for one output: the uniform baseline, the mean over i in Q_l of |T(i) seen| / |keys seen|
// (|T(i)| / n in a layer where every query sees every key). NaN in a layer where Q_l is empty (a decoder's
// next token: no query sees it).
// targets[i] lists T(i); an empty list means i is not in Q.
inline void score_target_sets(const Example& e, const std::vector<std::vector<std::size_t>>& targets, float* scores,
                              float* baseline) {
  const std::size_t n = e.size();
  // Each head's mass is one chain of dependent adds; kHeads heads go side by side, so that their chains
  // overlap (each head's sum is the same number as alone).
  constexpr int64_t kHeads = 4;
  std::vector<std::size_t> cells;  // i * n + j for every j of T(i), i in Q_l, in order: the order of each head's sum
  std::size_t q = 0;
  double uniform = 0;
  for (int64_t l = 0; l < e.layers; ++l) {
    if (l == 0 || !(e.keys(l) == e.keys(l - 1))) {  // Q_l, its cells and baseline: the same for layers of one range
      q = 0, uniform = 0;
      cells.clear();
      for (std::size_t i = 0; i < n; ++i) {
        std::size_t seen = 0;
        for (std::size_t j : targets[i]) seen += e.sees(l, i, j) ? 1 : 0;
        if (seen == 0) continue;
        ++q;
        uniform += static_cast<double>(seen) / static_cast<double>(e.visible_keys(l, i));
        for (std::size_t j : targets[i]) cells.push_back(i * n + j);
      }
    }
    baseline[l] = q == 0 ? kUndefined : static_cast<float>(uniform / static_cast<double>(q));
    float* s = scores + l * e.heads;
    if (q == 0) {
      std::fill(s, s + e.heads, kUndefined);
      continue;
    }
    int64_t h = 0;
    for (; h + kHeads <= e.heads; h += kHeads) {
      const float* a[kHeads];
      double total[kHeads] = {};
      for (int64_t k = 0; k < kHeads; ++k) a[k] = e.head(l, h + k);
      for (std::size_t c : cells)
        for (int64_t k = 0; k < kHeads; ++k) total[k] += a[k][c];
      for (int64_t k = 0; k < kHeads; ++k) s[h + k] = static_cast<float>(total[k] / static_cast<double>(q));
    }
    for (; h < e.heads; ++h) {
      const float* a = e.head(l, h);
      double total = 0;
      for (std::size_t c : cells) total += a[c];
      s[h] = static_cast<float>(total / static_cast<double>(q));
    }
  }
}

// Typed parameter access (the host has already checked names and types against DetectorInfo).
template <typename T>
T param(const Params& p, const std::string& name) {
  return std::get<T>(p.at(name));
}

// What the C++ types crossing the plugin boundary look like to the compiler that builds this code:
// standard library, its string ABI, debug mode, and the sizes of the SDK structs. The host compares
// a plugin's fingerprint with its own before it touches any of these types.
inline std::string abi_fingerprint() {
  std::string f;
#if defined(_LIBCPP_VERSION)
  f += "stdlib=libc++ " + std::to_string(_LIBCPP_VERSION);
#elif defined(__GLIBCXX__)
  f += "stdlib=libstdc++";
#else
  f += "stdlib=unknown";
#endif
#if defined(_GLIBCXX_USE_CXX11_ABI)
  f += "; _GLIBCXX_USE_CXX11_ABI=" + std::to_string(_GLIBCXX_USE_CXX11_ABI);
#endif
#if defined(_GLIBCXX_DEBUG) || defined(_LIBCPP_DEBUG)
  f += "; debug mode=on";
#else
  f += "; debug mode=off";
#endif
  f += "; sizeof(std::string)=" + std::to_string(sizeof(std::string)) +
       "; sizeof(ParamValue)=" + std::to_string(sizeof(ParamValue)) + "; sizeof(ParamSpec)=" + std::to_string(sizeof(ParamSpec)) +
       "; sizeof(DetectorInfo)=" + std::to_string(sizeof(DetectorInfo)) + "; sizeof(Token)=" + std::to_string(sizeof(Token)) +
       "; sizeof(WordAnnotation)=" + std::to_string(sizeof(WordAnnotation)) +
       "; sizeof(Example)=" + std::to_string(sizeof(Example)) +
       "; sizeof(ExampleScores)=" + std::to_string(sizeof(ExampleScores));
  return f;
}

// Copies a message into a caller's buffer (the C side of the boundary).
inline void write_error(const char* message, char* error, std::size_t size) {
  if (!error || size == 0) return;
  std::size_t i = 0;
  for (; message[i] != '\0' && i + 1 < size; ++i) error[i] = message[i];
  error[i] = '\0';
}

// Runs `f` (returning a pointer) so that no exception leaves it: on one, writes its message into
// `error` and returns null.
template <typename F>
auto call_guarded(F&& f, char* error, std::size_t error_size) noexcept -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    write_error(e.what(), error, error_size);
  } catch (...) {
    write_error("unknown exception", error, error_size);
  }
  return nullptr;
}

}  // namespace attnscan::sdk

// The plugin's exported C entry points. Put ATTNSCAN_DETECTOR(MyDetector, info_function) in one
// .cpp of the plugin; MyDetector needs a constructor taking `const attnscan::sdk::Params&`.
// No exception leaves them: info and create return null and write the message into `error`.
#define ATTNSCAN_DETECTOR(Class, info_fn)                                                              \
  extern "C" __attribute__((visibility("default"))) int attnscan_detector_api_version() {            \
    return ::attnscan::sdk::kApiVersion;                                                             \
  }                                                                                                  \
  extern "C" __attribute__((visibility("default"))) const char* attnscan_detector_abi() {            \
    static const std::string fingerprint = ::attnscan::sdk::abi_fingerprint();                       \
    return fingerprint.c_str();                                                                      \
  }                                                                                                  \
  extern "C" __attribute__((visibility("default"))) const ::attnscan::sdk::DetectorInfo*             \
  attnscan_detector_info(char* error, std::size_t error_size) {                                      \
    return ::attnscan::sdk::call_guarded(                                                            \
        [] {                                                                                         \
          static const ::attnscan::sdk::DetectorInfo detector_info = info_fn();                      \
          return &detector_info;                                                                     \
        },                                                                                           \
        error, error_size);                                                                          \
  }                                                                                                  \
  extern "C" __attribute__((visibility("default"))) ::attnscan::sdk::Detector* attnscan_detector_create( \
      const ::attnscan::sdk::Params* params, char* error, std::size_t error_size) {                  \
    return ::attnscan::sdk::call_guarded(                                                            \
        [&]() -> ::attnscan::sdk::Detector* { return new Class(*params); }, error, error_size);      \
  }                                                                                                  \
  extern "C" __attribute__((visibility("default"))) void attnscan_detector_destroy(                  \
      ::attnscan::sdk::Detector* d) noexcept {                                                       \
    try {                                                                                            \
      delete d;                                                                                      \
    } catch (...) {                                                                                  \
    }                                                                                                \
  }
