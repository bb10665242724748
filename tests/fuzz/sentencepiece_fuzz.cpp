// Any bytes as a SentencePiece `*.model` file (tokenizer/files/sentencepiece_model.hpp): the reader either
// refuses them with attnscan::ModelError or gives a model whose encoding of a few texts (and of the
// input itself as text) returns pieces that cover the normalized text, with ids within the model.
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "tokenizer/files/sentencepiece_model.hpp"

using namespace attnscan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    const detail::SentencePieceModel m(detail::parse_sentencepiece_proto(input, "fuzz.model"), "fuzz.model");
    for (std::string_view text : {std::string_view("Hello  world, \xE2\x98\x83 caf\xC3\xA9 9,000!"), std::string_view(" "),
                                  std::string_view("\xFF\xFE broken"), input.substr(0, 64)}) {
      std::string joined;
      for (const auto& [piece, id] : m.encode(text)) {
        if (piece.empty() || id < 0 || id >= m.size()) std::abort();
        joined += piece;
      }
      if (joined != m.normalize(text)) std::abort();
    }
  } catch (const ModelError&) {
  }
  return 0;
}
