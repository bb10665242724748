// A tokenizer's vocabulary: token <-> id.
#include <algorithm>
#include <fstream>

#include "common/error.hpp"
#include "tokenizer/tokenizer.hpp"

namespace attnscan {

Vocab::Vocab(const std::vector<std::pair<std::string, int32_t>>& entries) {
  int32_t max_id = -1;
  for (const auto& e : entries) max_id = std::max(max_id, e.second);
  tokens_.resize(static_cast<std::size_t>(max_id + 1));
  ids_.reserve(entries.size());
  for (const auto& e : entries) {
    tokens_[static_cast<std::size_t>(e.second)] = e.first;
    ids_[e.first] = e.second;
  }
}

Vocab::Vocab(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  ids_.reserve(tokens_.size());
  for (std::size_t i = 0; i < tokens_.size(); ++i) ids_[tokens_[i]] = static_cast<int32_t>(i);
}

Vocab Vocab::load(const std::filesystem::path& vocab_txt) {
  std::ifstream in(vocab_txt, std::ios::binary);
  if (!in) throw ModelError(vocab_txt.string() + ": cannot open vocabulary file");
  std::vector<std::string> tokens;
  std::string line;
  while (std::getline(in, line)) tokens.push_back(line);  // HF strips only "\n"
  if (tokens.empty()) throw ModelError(vocab_txt.string() + ": vocabulary file is empty");
  return Vocab(std::move(tokens));
}

int32_t Vocab::find(std::string_view token) const {
  thread_local std::string key;  // reused: no allocation per lookup (C++17 has no heterogeneous find)
  key.assign(token);
  return find(key);
}

int32_t Vocab::find(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

}  // namespace attnscan
