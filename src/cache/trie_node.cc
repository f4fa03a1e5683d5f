#include "cache/trie_node.h"

#include <xxhash.h>

#include <algorithm>

namespace cairn::cache {

uint64_t HashTokens(std::span<const Token> tokens) {
  return XXH3_64bits(tokens.data(), tokens.size_bytes());
}

int64_t CommonPrefix(std::span<const Token> a, std::span<const Token> b) {
  const size_t n = std::min(a.size(), b.size());
  const auto mismatch = std::mismatch(a.begin(), a.begin() + n, b.begin());
  return mismatch.first - a.begin();
}

}  // namespace cairn::cache
