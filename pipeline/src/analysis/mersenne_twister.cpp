#include "analysis/mersenne_twister.hpp"

namespace attnscan::stats {

namespace {

// MT19937-64's parameters (Matsumoto & Nishimura; the C++ standard's mt19937_64).
constexpr unsigned kN = MersenneTwister64::kWords, kM = 156;
constexpr uint64_t kMatrix = 0xb5026f5aa96619e9ULL, kUpper = ~uint64_t{0} << 31, kLower = ~kUpper;

inline uint64_t twisted(uint64_t first, uint64_t second, uint64_t far) {
  const uint64_t y = (first & kUpper) | (second & kLower);
  return far ^ (y >> 1) ^ ((0 - (y & 1)) & kMatrix);  // a mask, not a multiply: AVX-512F has no 64-bit one
}

// Each loop reads words at least 156 apart from the ones it writes (or ahead of them), so it vectorises.
__attribute__((target_clones("avx512f", "avx2", "default")))
void twist_and_temper(uint64_t* mt, uint64_t* out) {
  for (unsigned k = 0; k < kN - kM; ++k) mt[k] = twisted(mt[k], mt[k + 1], mt[k + kM]);
  for (unsigned k = kN - kM; k < kN - 1; ++k) mt[k] = twisted(mt[k], mt[k + 1], mt[k + kM - kN]);
  mt[kN - 1] = twisted(mt[kN - 1], mt[0], mt[kM - 1]);
  for (unsigned k = 0; k < kN; ++k) {
    uint64_t y = mt[k];
    y ^= (y >> 29) & 0x5555555555555555ULL;
    y ^= (y << 17) & 0x71d67fffeda60000ULL;
    y ^= (y << 37) & 0xfff7eee000000000ULL;
    out[k] = y ^ (y >> 43);
  }
}

}  // namespace

MersenneTwister64::MersenneTwister64(uint64_t seed) {
  state_[0] = seed;
  for (unsigned i = 1; i < kN; ++i) state_[i] = 6364136223846793005ULL * (state_[i - 1] ^ (state_[i - 1] >> 62)) + i;
}

void MersenneTwister64::refill() {
  twist_and_temper(state_.data(), out_.data());
  next_ = 0;
}

}  // namespace attnscan::stats
