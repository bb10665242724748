#pragma once
// The resampling generator of `attnscan compare` and the bootstrap: exactly std::mt19937_64's sequence
// and exactly the integers std::uniform_int_distribution<uint64_t> draws from it with libstdc++ (Lemire's
// nearly divisionless method), so p-values and intervals stay those of the same seed; but the state is
// advanced 312 words at a time in loops the compiler vectorises, and the draws are inlined (a label
// permutation of N examples takes N - 1 of them).
#include <algorithm>
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

  // The shuffle for i = n - 1 down to 1: swap(x[i], x[below(i + 1)]), the draws taken straight from the
  // buffer; adding up the values as their positions take their final value (n - 1 down to 0): those at
  // [split, n) into `above`, those at [0, split) into `below`, each in that reverse order.
  template <typename T>
  void shuffle_and_sum(T* x, std::size_t n, std::size_t split, double& below, double& above) {
    below = above = 0;
    if (n == 0) return;
    double& first = split > 0 ? below : above;  // where position 0 belongs
    if (split > 0) {
      steps(x, n - 1, std::min(split, n) - 1, above);
      steps(x, std::min(split, n) - 1, 0, below);
    } else {
      steps(x, n - 1, 0, above);
    }
    first += static_cast<double>(x[0]);
  }

  static constexpr unsigned kWords = 312;

 private:
  void refill();  // the next 312 words of state, tempered into out_

  // Steps i = hi down to lo + 1 of the shuffle, each x[i] added to `sum` once it is final. The inner
  // loop makes no call (a draw that may need redrawing leaves it), so the sum stays in a register.
  template <typename T>
  void steps(T* x, std::size_t hi, std::size_t lo, double& sum) {
    double s = sum;
    const auto step = [&](std::size_t i, uint64_t j) {
      std::swap(x[i], x[j]);
      s += static_cast<double>(x[i]);
    };
    for (std::size_t i = hi; i > lo;) {
      if (next_ == kWords) refill();
      unsigned next = next_;
      for (; next < kWords && i > lo; --i) {
        const unsigned __int128 product = static_cast<unsigned __int128>(out_[next]) * (i + 1);
        if (static_cast<uint64_t>(product) < i + 1) break;  // Lemire's check may ask for another draw
        ++next;
        step(i, static_cast<uint64_t>(product >> 64));
      }
      next_ = next;
      if (next < kWords && i > lo) {  // stopped at such a draw: settled here, with the generator's calls
        step(i, settled(static_cast<unsigned __int128>(out_[next_++]) * (i + 1), i + 1));
        --i;
      }
    }
    sum = s;
  }

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
