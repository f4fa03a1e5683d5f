// exp(x) for float in plain IEEE-754 float arithmetic (no libm call).
//
// Why not std::exp: (1) libm implementations differ in the last bit across
// glibc / musl / macOS, which would make seeded sampling platform-dependent;
// (2) a libm call blocks auto-vectorisation, and the sampler evaluates exp over
// the whole vocabulary (151,936 entries for Qwen) on every token.
//
// Method (Cephes expf): x = n ln2 + r with n = round(x / ln2) (round-to-nearest
// by the 1.5 * 2^23 magic constant), ln2 split in two for an exact n * ln2_hi,
// a degree-6 polynomial for e^r on |r| <= ln2/2, and 2^n built in the exponent
// bits. Relative error <= ~2e-7 (a couple of ulp) on [-87.3, 88].
// Below -87.3 the result is 0 (we never produce subnormals); inputs above 88
// are clamped to 88 (the sampler only evaluates x <= 0). NaN gives garbage
// (never UB): callers pass finite values or -inf (which gives 0).
#pragma once

#include <bit>
#include <cstdint>

namespace cairn::sampling {

// Order-preserving map float -> int32 (an involution): for non-NaN floats,
// a < b exactly when OrderedKey(a) < OrderedKey(b). Clamping and selecting in
// this integer domain keeps the loop free of float conditionals, which GCC
// will not if-convert under the default -ftrapping-math (so a loop of
// FastExp vectorises with the project's ordinary flags).
constexpr int32_t OrderedKey(float x) {
  const int32_t b = std::bit_cast<int32_t>(x);
  return b ^ ((b >> 31) & 0x7fffffff);
}
constexpr float FromOrderedKey(int32_t k) { return std::bit_cast<float>(k ^ ((k >> 31) & 0x7fffffff)); }

inline float FastExp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;       // 8 significant bits: n * kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;    // ln 2 - kLn2Hi
  constexpr float kRoundMagic = 12582912.0f;   // 1.5 * 2^23: adding it rounds to an integer
  constexpr int32_t kMinKey = OrderedKey(-87.3f);  // 2^n stays a normal float above this
  constexpr int32_t kMaxKey = OrderedKey(88.0f);

  const int32_t key = OrderedKey(x);
  const int32_t key_clamped = key < kMinKey ? kMinKey : (key > kMaxKey ? kMaxKey : key);
  const float xc = FromOrderedKey(key_clamped);
  const float n = (xc * kLog2e + kRoundMagic) - kRoundMagic;
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
  const float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r2 + r + 1.0f;
  const int32_t biased = static_cast<int32_t>(n) + 127;  // in [1, 254]
  const float two_n = std::bit_cast<float>(static_cast<uint32_t>(biased) << 23);
  const uint32_t keep = key < kMinKey ? 0u : ~0u;  // below -87.3 (and -inf): exactly 0
  return std::bit_cast<float>(std::bit_cast<uint32_t>(er * two_n) & keep);
}

}  // namespace cairn::sampling
