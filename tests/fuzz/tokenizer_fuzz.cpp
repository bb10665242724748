// Any bytes as a sentence pair (split at the first 0xFF byte): the WordPiece tokenizer either
// rejects invalid UTF-8 with attnscan::Error or returns ids that are all in the vocabulary, with
// [CLS] first and [SEP] last, within the length asked for.
#include <cstdlib>
#include <string_view>

#include "common/error.hpp"
#include "tokenizer/tokenizer.hpp"

using namespace attnscan;

namespace {

const Tokenizer& tokenizer() {
  static const Tokenizer t = [] {
    std::vector<std::string> tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "straw", "##berries",
                                       "##s", "go", "##ing", "é", "中", ".", ",", "!", "'"};
    for (char c = 'a'; c <= 'z'; ++c) tokens.push_back(std::string(1, c)), tokens.push_back("##" + std::string(1, c));
    return Tokenizer(Vocab(tokens), TokenizerConfig{});
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto cut = input.find('\xff');
  const std::string_view a = input.substr(0, cut), b = cut == std::string_view::npos ? "" : input.substr(cut + 1);
  const std::size_t max_length = size % 3 == 0 ? 0 : 8 + size % 40;
  try {
    const Encoding e = b.empty() ? tokenizer().encode_single(a, max_length) : tokenizer().encode_pair(a, b, max_length);
    const auto vocab = static_cast<int32_t>(tokenizer().vocab().size());
    for (int32_t id : e.ids)
      if (id < 0 || id >= vocab) std::abort();
    if (e.ids.size() < 2 || e.tokens.front() != "[CLS]" || e.tokens.back() != "[SEP]") std::abort();
    if (max_length > 0 && e.ids.size() > max_length) std::abort();
    if (e.segment.size() != e.ids.size() || e.type_ids.size() != e.ids.size() || e.word_index.size() != e.ids.size())
      std::abort();
  } catch (const Error&) {
  }
  return 0;
}
