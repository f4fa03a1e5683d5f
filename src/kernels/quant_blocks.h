// Byte layouts of the quantized block formats (ggml-common.h geometry) and of
// the 8-bit activation blocks MatMul quantizes activations into.
//
// Weight blocks are read straight out of mmapped GGUF data, so every struct is
// packed to its exact ggml size (no padding) and only ever accessed through
// memcpy-safe byte fields (uint8_t/int8_t arrays and uint16_t halves, which are
// read with memcpy to stay alignment-agnostic).
#pragma once

#include <cstdint>
#include <cstring>

namespace cairn::kernels {

inline constexpr int kQK = 32;    // elements per Q8_0 / Q4_0 / Q4_1 / Q5_0 / Q5_1 / IQ4_NL block
inline constexpr int kQKK = 256;  // elements per K-quant super-block
inline constexpr int kKScaleBytes = 12;

// Q8_0: value = d * qs[i].
struct BlockQ8_0 {
  uint8_t d[2];  // F16 bits
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q4_0: value = d * (q - 8); element j < 16 is the low nibble of qs[j],
// element j + 16 its high nibble.
struct BlockQ4_0 {
  uint8_t d[2];  // F16 bits
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// Q4_1: value = d * q + m, q unsigned 0..15 (nibbles as in Q4_0).
struct BlockQ4_1 {
  uint8_t d[2];  // F16 bits
  uint8_t m[2];  // F16 bits, the block minimum
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

// Q5_0: value = d * (x - 16), x = nibble | bit << 4 (0..31). Nibbles as in
// Q4_0; the fifth bit of element j (0..31) is bit j of qh read as a
// little-endian uint32.
struct BlockQ5_0 {
  uint8_t d[2];  // F16 bits
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

// Q5_1: value = d * x + m, x unsigned 0..31 built as in Q5_0.
struct BlockQ5_1 {
  uint8_t d[2];  // F16 bits
  uint8_t m[2];  // F16 bits
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

// IQ4_NL: value = d * kIQ4NLValues[nibble] (nibbles as in Q4_0).
struct BlockIQ4NL {
  uint8_t d[2];  // F16 bits
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockIQ4NL) == 18);

// The IQ4_NL non-linear codebook (signed levels, |v| <= 127).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// Q4_K: 8 sub-blocks of 32; value = d * sc[j] * q - dmin * m[j] with 6-bit
// sc/m packed in `scales` (see UnpackKScaleMin). Nibbles: each 64-element group
// uses 32 bytes, low nibbles for its first 32 elements, high for the next 32.
struct BlockQ4K {
  uint8_t d[2];     // F16 super-block scale of the 6-bit scales
  uint8_t dmin[2];  // F16 super-block scale of the 6-bit mins
  uint8_t scales[kKScaleBytes];
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(BlockQ4K) == 144);

// Q5_K: as Q4_K plus a fifth bit per element: element l (< 32) of 64-group g
// takes bit 2g of qh[l] (low-nibble half) or bit 2g+1 (high-nibble half).
struct BlockQ5K {
  uint8_t d[2];
  uint8_t dmin[2];
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(BlockQ5K) == 176);

// Q6_K: 16 sub-blocks of 16; value = d * scales[k] * (q - 32), q 6-bit.
// Within each 128-element half (ql += 64, qh += 32 per half), for l < 32:
//   element l      = low  nibble of ql[l]      | bits 0-1 of qh[l] << 4
//   element l + 32 = low  nibble of ql[l + 32] | bits 2-3 of qh[l] << 4
//   element l + 64 = high nibble of ql[l]      | bits 4-5 of qh[l] << 4
//   element l + 96 = high nibble of ql[l + 32] | bits 6-7 of qh[l] << 4
struct BlockQ6K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  uint8_t d[2];
};
static_assert(sizeof(BlockQ6K) == 210);

// Q2_K: 16 sub-blocks of 16; value = d * (scales[k] & 0xF) * q - dmin *
// (scales[k] >> 4), q 2-bit. Element e = 128h + 32j + l (h 0..1, j 0..3,
// l 0..31) is bits 2j, 2j + 1 of qs[32h + l]; its sub-block is e / 16.
struct BlockQ2K {
  uint8_t scales[kQKK / 16];  // low nibble: scale, high nibble: min
  uint8_t qs[kQKK / 4];
  uint8_t d[2];     // F16 super-block scale of the 4-bit scales
  uint8_t dmin[2];  // F16 super-block scale of the 4-bit mins
};
static_assert(sizeof(BlockQ2K) == 84);

// Q3_K: 16 sub-blocks of 16; value = d * s[k] * v, v = q2 - 4 * !hbit
// (-4..3), s[k] a 6-bit scale - 32 (-32..31, see UnpackQ3KScales). q2 as
// Q2_K's levels; the high bit of element 128h + 32j + l is bit 4h + j of
// hmask[l].
struct BlockQ3K {
  uint8_t hmask[kQKK / 8];
  uint8_t qs[kQKK / 4];
  uint8_t scales[kKScaleBytes];
  uint8_t d[2];  // F16
};
static_assert(sizeof(BlockQ3K) == 110);

// IQ4_XS: 8 sub-blocks of 32; value = d * (ls[ib] - 32) * kIQ4NLValues[nibble],
// ls 6-bit: low 4 bits from nibble ib of scales_l (read as a little-endian
// u32), high 2 bits from bits 2ib, 2ib + 1 of scales_h. Sub-block ib's
// nibbles are qs[16ib ..]: element t < 16 the low nibble of qs[16ib + t],
// element t + 16 its high nibble (as IQ4_NL).
struct BlockIQ4XS {
  uint8_t d[2];         // F16
  uint8_t scales_h[2];  // little-endian u16
  uint8_t scales_l[kQKK / 64];
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(BlockIQ4XS) == 136);

inline uint16_t LoadHalfBits(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof h);
  return h;
}

inline void StoreHalfBits(uint16_t h, uint8_t* p) { std::memcpy(p, &h, sizeof h); }

// 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K super-block:
// j < 4: low 6 bits of bytes j (scale) and j + 4 (min); j >= 4: a nibble of
// byte j + 4 plus the top 2 bits of byte j - 4 (scale) or byte j (min).
inline void UnpackKScaleMin(const uint8_t* scales, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *m = scales[j + 4] & 63;
  } else {
    *sc = (scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4);
    *m = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

// Inverse of UnpackKScaleMin for 8 pairs of 6-bit values (each 0..63).
inline void PackKScaleMin(const uint8_t sc[8], const uint8_t m[8], uint8_t* scales) {
  std::memset(scales, 0, kKScaleBytes);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      scales[j] = sc[j];
      scales[j + 4] = m[j];
    } else {
      scales[j + 4] = static_cast<uint8_t>((sc[j] & 0xF) | ((m[j] & 0xF) << 4));
      scales[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
      scales[j] |= static_cast<uint8_t>((m[j] >> 4) << 6);
    }
  }
}

}  // namespace cairn::kernels
