#pragma once
// Word-level attention as Clark et al. (2019) convert it: attention to a word is the sum over its
// pieces, attention from a word the mean over its pieces. Words are the content words of the example
// (Begin/Separator tokens are not words); predictions only consider the other words of the same
// sentence, and ties go to the earlier word.
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "attnscan/detector.hpp"

namespace attnscan::dependency {

class WordAttention {
 public:
  struct Word {
    uint8_t sentence = 0;
    int32_t index = 0;                // word_index within its sentence
    std::vector<std::size_t> pieces;  // its tokens
  };

  explicit WordAttention(const sdk::Example& e) : n_(e.size()) {
    std::map<std::pair<uint8_t, int32_t>, std::size_t> at;
    for (std::size_t t = 0; t < e.size(); ++t) {
      const auto& token = e.tokens[t];
      if (token.word_index < 0 || (token.role != sdk::TokenRole::Content && token.role != sdk::TokenRole::SpecialInText))
        continue;
      auto [it, added] = at.emplace(std::make_pair(token.sentence, token.word_index), words_.size());
      if (added) words_.push_back({token.sentence, token.word_index, {}});
      words_[it->second].pieces.push_back(t);
    }
  }

  std::size_t size() const { return words_.size(); }
  const Word& word(std::size_t w) const { return words_[w]; }

  // The word of `sentence` with word_index `index`, or -1 when it has no tokens.
  long find(uint8_t sentence, int32_t index) const {
    for (std::size_t w = 0; w < words_.size(); ++w)
      if (words_[w].sentence == sentence && words_[w].index == index) return static_cast<long>(w);
    return -1;
  }

  // matrix[i * size() + j]: attention from word i to word j under one head's token attention [n][n].
  void compute(const float* attention, std::vector<double>& matrix) const {
    const std::size_t m = words_.size();
    matrix.assign(m * m, 0.0);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j) {
        if (words_[i].sentence != words_[j].sentence) continue;
        double sum = 0;
        for (std::size_t p : words_[i].pieces)
          for (std::size_t q : words_[j].pieces) sum += attention[p * n_ + q];
        matrix[i * m + j] = sum / static_cast<double>(words_[i].pieces.size());
      }
  }

  // The other word of i's sentence that i attends to most.
  std::size_t most_attended_by(const std::vector<double>& matrix, std::size_t i) const { return best(matrix, i, false); }
  // The other word of i's sentence that attends to i most.
  std::size_t most_attending_to(const std::vector<double>& matrix, std::size_t i) const { return best(matrix, i, true); }

 private:
  std::size_t best(const std::vector<double>& matrix, std::size_t i, bool transpose) const {
    const std::size_t m = words_.size();
    std::size_t arg = i;
    double top = -1;
    for (std::size_t j = 0; j < m; ++j) {
      if (j == i || words_[j].sentence != words_[i].sentence) continue;
      const double v = transpose ? matrix[j * m + i] : matrix[i * m + j];
      if (v > top) top = v, arg = j;
    }
    return arg;
  }

  std::size_t n_;
  std::vector<Word> words_;
};

}  // namespace attnscan::dependency
