// Node of the token-block trie (internal to the prefix cache).
//
// Node at depth d (root = depth 0, no block) holds block index d - 1: tokens
// [start, start + tokens.size()) with start = (d - 1) * B, 1 <= tokens.size() <= B,
// and the frozen KV block covering those positions. Only full nodes
// (tokens.size() == B) have children, so a partial node is always a leaf.
// Siblings never have one token list a prefix of another's (so at most one
// child matches a full block exactly). Checkpoints sit on the node whose block
// holds their last consumed token: position p in (start, start + size].
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cache/cache_types.h"
#include "cache/chain_key.h"
#include "core/kv_block.h"

namespace cairn::cache {

// A counter touched under the shared (reader) lock; relaxed is enough since
// it only orders eviction, and it is read under the exclusive lock.
class RelaxedCounter {
 public:
  RelaxedCounter() = default;
  explicit RelaxedCounter(uint64_t v) : v_(v) {}
  RelaxedCounter(const RelaxedCounter& other) : v_(other.load()) {}
  RelaxedCounter& operator=(const RelaxedCounter& other) {
    v_.store(other.load(), std::memory_order_relaxed);
    return *this;
  }
  uint64_t load() const { return v_.load(std::memory_order_relaxed); }
  void store(uint64_t v) { v_.store(v, std::memory_order_relaxed); }
  // Touches are const: they happen on a const view under the shared lock.
  void Max(uint64_t v) const {
    uint64_t cur = load();
    while (cur < v && !v_.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
    }
  }
  void Add(uint64_t v) const { v_.fetch_add(v, std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint64_t> v_{0};
};

struct CheckpointEntry {
  int64_t position = 0;
  CheckpointKind kind = CheckpointKind::kBoundary;
  RecurrentSnapshotRef snapshot;
  uint64_t created = 0;     // clock of the insert that added it
  RelaxedCounter last_use;  // max(created, last hit)
  RelaxedCounter hits;
};

struct TrieNode {
  TrieNode* parent = nullptr;
  int64_t start = 0;            // absolute position of tokens[0]
  std::vector<Token> tokens;    // 1..B tokens (empty for the root)
  uint64_t hash = 0;            // XXH3 of `tokens` (full nodes are found by it)
  KvBlockRef block;             // frozen; null for the root
  std::vector<std::unique_ptr<TrieNode>> children;
  std::vector<CheckpointEntry> checkpoints;  // ascending position
  int64_t leaves = 1;           // leaves in this subtree (entries sharing this node)
  RelaxedCounter last_use;      // >= every descendant's (touches walk from the root)
  RelaxedCounter hits;
  // Eviction scratch (exclusive lock only): newest `created` among checkpoints
  // strictly below this node.
  uint64_t newest_below = 0;

  int64_t end() const { return start + static_cast<int64_t>(tokens.size()); }
  bool is_leaf() const { return children.empty(); }
};

// Hash of a token block (xxHash XXH3, 64-bit).
uint64_t HashTokens(std::span<const Token> tokens);

// Length of the common prefix of a and b.
int64_t CommonPrefix(std::span<const Token> a, std::span<const Token> b);

// Chain key of the whole path from the root to `node` (the entry id of a leaf).
ChainKey PathKey(const TrieNode* node);

}  // namespace cairn::cache
