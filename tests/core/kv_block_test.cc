// KvLayout's per-token byte runs: CopyTokens and ZeroTokensFrom touch exactly
// the bytes of the positions asked for, in F16 slabs and in Q8_0 K regions
// (KvQ8Geometry: levels [head_dim / 32][8 quads][T][4], scales [head_dim / 32][T]).
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/kv_block.h"

namespace cairn {
namespace {

// The position each byte of a block belongs to (-1: padding of T), derived from
// the layout as documented in core/kv_block.h.
std::vector<int64_t> TokenOfEachByte(const KvLayout& l) {
  std::vector<int64_t> token(l.BlockBytes(), -1);
  const KvQ8Geometry g = l.Q8();
  for (int layer = 0; layer < l.n_attn_layers; ++layer) {
    for (int kv = 0; kv < 2; ++kv) {
      const size_t slab = l.SlabOffset(layer, kv);
      for (size_t off = 0; off < l.SlabBytes(kv); ++off) {
        int64_t t;
        if (kv == 0 && l.k_q8) {
          const int64_t in_region = static_cast<int64_t>(off) % g.RegionBytes();
          t = in_region < g.LevelBytes() ? (in_region / 4) % g.Tokens() : ((in_region - g.LevelBytes()) / 2) % g.Tokens();
        } else {
          t = static_cast<int64_t>(off) / (l.head_dim * 2) % l.block_tokens;
        }
        token[slab + off] = t < l.block_tokens ? t : -1;
      }
    }
  }
  return token;
}

std::vector<KvLayout> Layouts() {
  std::vector<KvLayout> out;
  for (const bool q8 : {false, true}) {
    for (const int block : {64, 20}) {   // 20: T padded to 32
      KvLayout l;
      l.n_attn_layers = 2;
      l.n_kv_heads = 2;
      l.head_dim = 64;
      l.k_q8 = q8;
      l.block_tokens = block;
      out.push_back(l);
    }
  }
  return out;
}

TEST(KvLayoutTest, CopyTokensCopiesExactlyThosePositions) {
  for (const KvLayout& l : Layouts()) {
    const std::vector<int64_t> token = TokenOfEachByte(l);
    std::vector<uint8_t> src(l.BlockBytes()), dst(l.BlockBytes(), 0);
    std::mt19937 rng(3);
    for (auto& b : src) b = static_cast<uint8_t>(1 + rng() % 255);   // never 0
    const int64_t t0 = 5, t1 = 17;
    l.CopyTokens(src.data(), dst.data(), t0, t1);
    for (size_t i = 0; i < dst.size(); ++i) {
      const bool inside = token[i] >= t0 && token[i] < t1;
      ASSERT_EQ(dst[i], inside ? src[i] : 0) << "byte " << i << " token " << token[i] << " q8 " << l.k_q8;
    }
  }
}

TEST(KvLayoutTest, ZeroTokensFromClearsExactlyTheTail) {
  for (const KvLayout& l : Layouts()) {
    const std::vector<int64_t> token = TokenOfEachByte(l);
    for (const int64_t valid : {int64_t{0}, int64_t{7}, int64_t{l.block_tokens}}) {
      std::vector<uint8_t> block(l.BlockBytes(), 0xA5);
      l.ZeroTokensFrom(block.data(), valid);
      for (size_t i = 0; i < block.size(); ++i) {
        ASSERT_EQ(block[i], token[i] >= valid ? 0 : 0xA5) << "byte " << i << " valid " << valid << " q8 " << l.k_q8;
      }
    }
  }
}

}  // namespace
}  // namespace cairn
