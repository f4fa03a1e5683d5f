// Content keys of token prefixes, shared by the RAM trie's entry ids and the
// disk tier's records.
//
// K(0) = Root(); K(p) for a block boundary p = i * B is
// Extend(K((i-1) * B), tokens[(i-1) * B, p)), and for any other p it is
// Extend(K(floor(p / B) * B), tokens[floor(p / B) * B, p)). A key therefore
// names a whole prefix (every earlier token went into it) while costing one
// block of hashing to extend, and a record that stores K(i * B) plus its
// block's tokens can compute the key of its own end without the prefix.
// XXH3-128: a collision between two different prefixes needs ~2^64 keys.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_types.h"

namespace cairn::cache {

struct ChainKey {
  uint64_t lo = 0;
  uint64_t hi = 0;

  static ChainKey Root();
  bool operator==(const ChainKey&) const = default;
  // 32 lowercase hex digits (hi then lo); the entry id in GET /cache.
  std::string Hex() const;
  // Parses Hex(); false on anything else.
  static bool FromHex(std::string_view hex, ChainKey* out);
};

struct ChainKeyHash {
  size_t operator()(const ChainKey& k) const { return static_cast<size_t>(k.lo ^ (k.hi * 0x9E3779B97F4A7C15ull)); }
};

ChainKey ExtendKey(const ChainKey& prev, std::span<const Token> tokens);

// K(p) of `tokens` for any p <= tokens.size(): block-boundary keys are
// computed once, in order, as they are first needed.
class PrefixKeys {
 public:
  PrefixKeys(std::span<const Token> tokens, int block_tokens);
  ChainKey At(int64_t position);
  // K(i * B).
  ChainKey Boundary(int64_t block_index);

 private:
  std::span<const Token> tokens_;
  int block_tokens_;
  std::vector<ChainKey> boundaries_;  // boundaries_[i] = K(i * B)
};

}  // namespace cairn::cache
