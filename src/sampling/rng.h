// Per-request random numbers for sampling.
//
// Generator: xoshiro256** (Blackman & Vigna, 2018), 256-bit state, period
// 2^256 - 1. Its four state words are seeded from splitmix64: the splitmix64
// state starts at `seed XOR Mix64(stream)` (Mix64(0) == 0, so stream 0 uses
// the seed as is) and its first four outputs become s[0..3].
//
// Everything is 64-bit integer arithmetic plus one exact conversion to double,
// so a given (seed, stream) yields the same numbers on every platform,
// compiler and standard library (std::mt19937 would too, but the standard
// distributions on top of it are implementation-defined, so we never use them).
//
// Uniform() returns k * 2^-53 with k = NextU64() >> 11 (the top 53 bits), i.e. a
// double uniformly spaced in [0, 1); it never returns 1.
#pragma once

#include <cstdint>

namespace cairn::sampling {

class Rng {
 public:
  explicit Rng(uint64_t seed, uint64_t stream = 0) {
    uint64_t sm = seed ^ Mix64(stream);
    for (uint64_t& word : s_) {
      sm += kGoldenGamma;
      word = Mix64(sm);
    }
  }

  uint64_t NextU64() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits (exactly representable; never 1).
  double Uniform() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

  // splitmix64's output function (a bijection of uint64 with Mix64(0) == 0).
  static uint64_t Mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  static constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  uint64_t s_[4];
};

}  // namespace cairn::sampling
