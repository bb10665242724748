// Tokenizer speed per subword model kind and file: sentences per second over the distinct sentences
// of STS-B dev (one thread, no template; `encode_pair` over the pairs as well).
//
//   tokenizer_bench STS_DEV_CSV NAME=MODEL_DIR:MODEL_TYPE:FILE ...
//   FILE: slow | json (tokenizer.json)
// e.g. tokenizer_bench ../shared/datasets/stsb/sts-dev.csv minilm=~/.cache/attnscan/models/all-MiniLM-L6-v2:bert:slow
//      roberta=build/fixtures/trained_tokenizers/roberta:roberta:json
#include <chrono>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.hpp"
#include "model/model_tokenizer.hpp"

using namespace attnscan;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: tokenizer_bench STS_DEV_CSV NAME=MODEL_DIR:MODEL_TYPE:slow|json ...\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << argv[1] << ": cannot open\n";
    return 1;
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  std::vector<std::string> sentences;
  std::set<std::string> seen;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
    if (f.size() < 7) continue;
    pairs.emplace_back(f[5], f[6]);
    for (const auto& s : {f[5], f[6]})
      if (seen.insert(s).second) sentences.push_back(s);
  }
  std::cout << argv[1] << ": " << sentences.size() << " distinct sentences, " << pairs.size() << " pairs\n";
  for (int i = 2; i < argc; ++i) {
    const std::string spec = argv[i];
    const auto eq = spec.find('='), c2 = spec.rfind(':'), c1 = spec.rfind(':', c2 - 1);
    if (eq == std::string::npos || c1 == std::string::npos || c1 <= eq) {
      std::cerr << spec << ": expected NAME=MODEL_DIR:MODEL_TYPE:slow|json\n";
      return 2;
    }
    ModelConfig model;
    model.model_type = spec.substr(c1 + 1, c2 - c1 - 1);
    model.vocab_size = 1 << 24;
    model.max_position_embeddings = 512;
    const auto file = spec.substr(c2 + 1) == "json" ? TokenizerFile::TokenizerJson : TokenizerFile::Slow;
    const auto tok = load_tokenizer(spec.substr(eq + 1, c1 - eq - 1), model, file);
    std::size_t pieces = 0;
    auto best = [&](auto&& body) {  // the fastest of 3 runs
      double b = 1e30;
      for (int r = 0; r < 3; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        body();
        b = std::min(b, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      return b;
    };
    const double s_sent = best([&] {
      pieces = 0;
      for (const auto& s : sentences) pieces += tok.tokenize(s).ids.size();
    });
    const double s_pair = best([&] {
      for (const auto& [a, b] : pairs) (void)tok.encode_pair(a, b);
    });
    std::cout << spec.substr(0, eq) << " [" << tok.source() << "]: " << static_cast<long>(sentences.size() / s_sent)
              << " sentences/s (" << pieces << " pieces), " << static_cast<long>(pairs.size() / s_pair) << " pairs/s\n";
  }
  return 0;
}
