#include "cache/trie_node.h"

#include <xxhash.h>

#include <algorithm>
#include <vector>

namespace cairn::cache {

uint64_t HashTokens(std::span<const Token> tokens) {
  return XXH3_64bits(tokens.data(), tokens.size_bytes());
}

int64_t CommonPrefix(std::span<const Token> a, std::span<const Token> b) {
  const size_t n = std::min(a.size(), b.size());
  const auto mismatch = std::mismatch(a.begin(), a.begin() + n, b.begin());
  return mismatch.first - a.begin();
}

ChainKey PathKey(const TrieNode* node) {
  std::vector<const TrieNode*> path;
  for (const TrieNode* a = node; a != nullptr && a->parent != nullptr; a = a->parent) path.push_back(a);
  ChainKey key = ChainKey::Root();
  for (auto it = path.rbegin(); it != path.rend(); ++it) key = ExtendKey(key, (*it)->tokens);
  return key;
}

}  // namespace cairn::cache
