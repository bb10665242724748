#pragma once
// The resampling generator of `attnscan compare` and the bootstrap: exactly std::mt19937_64's sequence
// and exactly the integers std::uniform_int_distribution<uint64_t> draws from it with libstdc++ (Lemire's
// nearly divisionless method), so p-values and intervals stay those of the same seed; but the state is
// advanced 312 words at a time in loops the compiler vectorises, and the draws are inlined (a label
// permutation of N examples takes N - 1 of them).
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace attnscan::stats {

class MersenneTwister64 {
 public:
  explicit MersenneTwister64(uint64_t seed);

  uint64_t operator()() {
    if (next_ == kWords) refill();
    return out_[next_++];
  }

  // A uniform integer in [0, range), range >= 1: std::uniform_int_distribution<uint64_t>(0, range - 1)'s.
  uint64_t below(uint64_t range) { return settled(static_cast<unsigned __int128>((*this)()) * range, range); }

  // for i = n - 1 down to 1: swap(x[i], x[below(i + 1)]), the draws taken straight from the buffer.
  template <typename T>
  void shuffle(T* x, std::size_t n) {
    for (std::size_t i = n - 1; i > 0;) {
      if (next_ == kWords) refill();
      for (; next_ < kWords && i > 0; --i) {
        const unsigned __int128 product = static_cast<unsigned __int128>(out_[next_++]) * (i + 1);
        const auto j = static_cast<uint64_t>(product) < i + 1 ? settled(product, i + 1) : static_cast<uint64_t>(product >> 64);
        std::swap(x[i], x[j]);
      }
    }
  }

  static constexpr unsigned kWords = 312;

 private:
  void refill();  // the next 312 words of state, tempered into out_

  // Lemire's method from a first product word x range: while its low half is below 2^64 mod range, the
  // draw would favour small values and is made again.
  uint64_t settled(unsigned __int128 product, uint64_t range) {
    auto low = static_cast<uint64_t>(product);
    if (low < range) {
      const uint64_t threshold = (0 - range) % range;
      while (low < threshold) {
        product = static_cast<unsigned __int128>((*this)()) * range;
        low = static_cast<uint64_t>(product);
      }
    }
    return static_cast<uint64_t>(product >> 64);
  }

  alignas(64) std::array<uint64_t, kWords> state_{};
  alignas(64) std::array<uint64_t, kWords> out_{};
  unsigned next_ = kWords;
};

}  // namespace attnscan::stats
