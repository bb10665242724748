// attnscan's own detectors in this process (DetectorRunner, as a run calls it), on examples shaped like
// PAWS pairs, each example's maps where the encoder left them: not in this core's cache.
//   detector_runner_bench [--n 53] [--layers 12] [--heads 12] [--examples 24] [--reps 20] [--warm]
// Each example is n tokens in the pair template (<s> A </s></s> B </s>), words of one to three pieces
// drawn from a small vocabulary (so that words repeat within and across the sentences), and random
// row-stochastic maps. Before each repetition 256 MiB are written, as the layers' GEMMs do between the
// attention and the detectors. Prints the best over --reps in us per token: the seven detectors
// together, then each alone (alone, a detector also pays for bringing the maps in). With --warm nothing is
// written between repetitions: with --examples 1 the maps stay in the L2 cache, and the figures are what
// the detectors compute.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "plugin_host/detector_runner.hpp"
#include "plugin_host/plugin_host.hpp"

namespace {

using namespace attnscan;

struct Shape {
  int64_t n = 53, layers = 12, heads = 12, examples = 24;
  int reps = 20;
  bool warm = false;  // the maps stay in cache between repetitions (--warm): what the detectors compute
};

const char* const kDetectors[] = {"next_token", "prev_token", "same_sentence_match", "cross_sentence_match",
                                  "subword_siblings", "delimiter", "entropy"};

// The tokens of one pair: the template's specials and two sentences of words split into pieces.
std::vector<sdk::Token> pair_tokens(int64_t n, std::mt19937& rng) {
  static const char* const words[] = {"the", "cat", "sat", "on", "a", "mat", "strawberries", "were",
                                      "sold", "in", "market", "by", "farmer", "who", "grew", "them"};
  std::uniform_int_distribution<int> word(0, 15), pieces(1, 3);
  std::vector<sdk::Token> t;
  auto special = [&](sdk::TokenRole role, uint8_t sentence) {
    sdk::Token s;
    s.text = role == sdk::TokenRole::Begin ? "<s>" : "</s>";
    s.role = role, s.sentence = sentence;
    t.push_back(s);
  };
  special(sdk::TokenRole::Begin, 0);
  const int64_t half = (n - 4) / 2;
  for (uint8_t sentence = 0; sentence < 2; ++sentence) {
    const int64_t end = sentence == 0 ? 1 + half : n - 1;
    for (int32_t w = 0; static_cast<int64_t>(t.size()) < end; ++w) {
      const std::string text = words[word(rng)];
      for (int p = pieces(rng); p > 0 && static_cast<int64_t>(t.size()) < end; --p) {
        sdk::Token c;
        c.text = text, c.word = text, c.sentence = sentence, c.word_index = w;
        t.push_back(c);
      }
    }
    special(sdk::TokenRole::Separator, sentence);
    if (sentence == 0) special(sdk::TokenRole::Separator, 1);
  }
  t.resize(static_cast<std::size_t>(n));
  return t;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best time over the repetitions of scoring the batch with `names`, in us per token.
double time_detectors(const Shape& s, const std::vector<std::string>& names, const std::vector<sdk::Example>& batch,
                      std::vector<char>& other) {
  PluginHost host;
  std::vector<LoadedDetector> loaded;
  for (const auto& name : names) loaded.push_back(host.load(name, {}));
  DetectorRunOptions options;
  options.isolation = DetectorIsolation::None;
  DetectorRunner runner(loaded, options);
  double best = 1e300;
  for (int rep = 0; rep < s.reps; ++rep) {
    if (!s.warm)
      for (std::size_t i = 0; i < other.size(); i += 64) other[i] += 1;
    const auto t0 = std::chrono::steady_clock::now();
    const auto scores = runner.score(batch);
    best = std::min(best, seconds_since(t0));
    if (scores.size() != names.size()) std::abort();
  }
  return best * 1e6 / static_cast<double>(s.examples * s.n);
}

bool parse(int argc, char** argv, Shape& s) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--warm") {
      s.warm = true;
      continue;
    }
    auto next = [&](auto& v) {
      if (i + 1 >= argc) return false;
      v = static_cast<std::remove_reference_t<decltype(v)>>(std::atoll(argv[++i]));
      return true;
    };
    if (a == "--n" ? !next(s.n)
        : a == "--layers" ? !next(s.layers)
        : a == "--heads" ? !next(s.heads)
        : a == "--examples" ? !next(s.examples)
        : a == "--reps" ? !next(s.reps)
                         : true)
      return false;
  }
  return s.n >= 8 && s.layers > 0 && s.heads > 0 && s.examples > 0 && s.reps > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Shape s;
  if (!parse(argc, argv, s)) {
    std::fprintf(stderr, "usage: detector_runner_bench [--n 53] [--layers 12] [--heads 12] [--examples 24] [--reps 20] [--warm] "
                         "(n >= 8, the rest positive)\n");
    return 2;
  }
  try {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    const std::size_t nn = static_cast<std::size_t>(s.n * s.n), per_example = static_cast<std::size_t>(s.layers * s.heads) * nn;
    std::vector<float> maps(per_example * static_cast<std::size_t>(s.examples));
    for (std::size_t row = 0; row < maps.size(); row += static_cast<std::size_t>(s.n)) {
      float sum = 0;
      for (int64_t j = 0; j < s.n; ++j) sum += maps[row + j] = uniform(rng) * uniform(rng);
      for (int64_t j = 0; j < s.n; ++j) maps[row + j] /= sum;
    }
    std::vector<sdk::Example> batch(static_cast<std::size_t>(s.examples));
    for (std::size_t k = 0; k < batch.size(); ++k) {
      batch[k].id = std::to_string(k);
      batch[k].tokens = pair_tokens(s.n, rng);
      batch[k].layers = s.layers, batch[k].heads = s.heads;
      batch[k].attention = maps.data() + k * per_example;
    }
    std::vector<char> other(std::size_t{256} << 20);
    std::printf("%lld examples of %lld tokens, %lld layers x %lld heads (%.2f MiB of maps each); best of %d\n",
                static_cast<long long>(s.examples), static_cast<long long>(s.n), static_cast<long long>(s.layers),
                static_cast<long long>(s.heads), static_cast<double>(per_example * sizeof(float)) / (1 << 20), s.reps);
    const std::vector<std::string> all(std::begin(kDetectors), std::end(kDetectors));
    std::printf("%-22s %7.2f us per token\n", "all seven", time_detectors(s, all, batch, other));
    for (const auto& name : all) std::printf("%-22s %7.2f\n", name.c_str(), time_detectors(s, {name}, batch, other));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "detector_runner_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
