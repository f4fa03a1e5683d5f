// PrefixCache introspection: List (GET /cache), Stats (GET /metrics) and the
// invariant checker used by tests.
#include <algorithm>
#include <mutex>
#include <unordered_set>

#include "cache/prefix_cache.h"
#include "core/error.h"

namespace cairn::cache {

std::vector<EntryInfo> PrefixCache::List() const {
  std::shared_lock lock(mu_);
  std::vector<EntryInfo> entries;
  std::vector<const TrieNode*> stack;
  for (const auto& child : root_->children) stack.push_back(child.get());
  std::vector<const TrieNode*> path;
  while (!stack.empty()) {
    const TrieNode* node = stack.back();
    stack.pop_back();
    for (const auto& child : node->children) stack.push_back(child.get());
    if (!node->is_leaf()) continue;
    path.clear();
    for (const TrieNode* a = node; a != root_.get(); a = a->parent) path.push_back(a);
    std::reverse(path.begin(), path.end());

    EntryInfo e;
    e.id = PathKey(node).Hex();
    e.tokens = node->end();
    e.last_use = node->last_use.load();
    e.hits = node->hits.load();
    std::unordered_set<const void*> seen;
    auto count = [&](const void* object, size_t bytes, bool exclusive) {
      if (!seen.insert(object).second) return;
      e.bytes += bytes;
      if (exclusive && ledger_.Refs(object) == 1) e.exclusive_bytes += bytes;
    };
    for (const TrieNode* p : path) {
      const bool exclusive = p->leaves == 1;
      if (p->leaves > 1) e.shared_tokens = p->end();
      count(p->block.get(), p->block->bytes(), exclusive);
      for (const CheckpointEntry& c : p->checkpoints) {
        count(c.snapshot.get(), c.snapshot->held_bytes(), exclusive);
        e.checkpoints.push_back({c.position, c.kind, c.snapshot->held_bytes(), c.hits.load(), c.last_use.load(),
                                 static_cast<int64_t>(c.snapshot->replay_tokens().size())});
      }
    }
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(),
            [](const EntryInfo& a, const EntryInfo& b) { return a.last_use > b.last_use; });
  return entries;
}

CacheStats PrefixCache::Stats() const {
  CacheStats s;
  auto get = [](const std::atomic<uint64_t>& v) { return v.load(std::memory_order_relaxed); };
  s.lookups = get(lookups_);
  for (int i = 0; i < kNumHitKinds; ++i) s.hits[i] = get(hits_[i]);
  s.prompt_tokens = get(prompt_tokens_);
  s.reused_tokens = get(reused_tokens_);
  s.inserts = get(inserts_);
  s.inserted_blocks = get(inserted_blocks_);
  s.inserted_checkpoints = get(inserted_checkpoints_);
  s.short_prompt_refusals = get(short_prompt_refusals_);
  for (int i = 0; i < kNumEvictReasons; ++i) s.evictions[i] = get(evictions_[i]);
  s.evicted_bytes = get(evicted_bytes_);
  std::shared_lock lock(mu_);
  s.bytes_held = ledger_.total();
  s.budget_bytes = budget_bytes_;
  s.checkpoint_bytes = checkpoint_ledger_.total();
  s.checkpoint_budget_bytes = checkpoint_budget_bytes_;
  s.checkpoints_held = checkpoints_;
  s.nodes = nodes_;
  s.entries = root_->leaves;
  std::unordered_set<const void*> blocks;
  std::vector<const TrieNode*> stack{root_.get()};
  while (!stack.empty()) {
    const TrieNode* node = stack.back();
    stack.pop_back();
    if (node->block) blocks.insert(node->block.get());
    for (const auto& child : node->children) stack.push_back(child.get());
  }
  s.blocks_held = static_cast<int64_t>(blocks.size());
  return s;
}

void PrefixCache::CheckInvariants() const {
  std::unique_lock lock(mu_);
  const int64_t block = config_.block_tokens;
  std::unordered_set<const void*> objects;
  std::unordered_set<const void*> checkpoint_objects;
  size_t bytes = 0;
  size_t checkpoint_bytes = 0;
  int64_t nodes = 0;
  int64_t checkpoints = 0;
  auto account = [&](const void* object, size_t size) {
    if (objects.insert(object).second) bytes += size;
  };
  // Pre-order list; leaves are verified bottom-up afterwards.
  std::vector<const TrieNode*> order{root_.get()};
  for (size_t i = 0; i < order.size(); ++i) {
    const TrieNode* node = order[i];
    const auto& kids = node->children;
    for (size_t a = 0; a < kids.size(); ++a) {
      const TrieNode* child = kids[a].get();
      CAIRN_CHECK(child->parent == node);
      CAIRN_CHECK(child->start == node->end());
      CAIRN_CHECK(node == root_.get() || static_cast<int64_t>(node->tokens.size()) == block);
      CAIRN_CHECK(!child->tokens.empty() && static_cast<int64_t>(child->tokens.size()) <= block);
      CAIRN_CHECK(child->hash == HashTokens(child->tokens));
      CAIRN_CHECK(child->last_use.load() <= node->last_use.load() || node == root_.get());
      for (size_t b = 0; b < kids.size(); ++b) {
        if (a == b) continue;
        const TrieNode* other = kids[b].get();
        // No sibling's tokens are a prefix of another's.
        CAIRN_CHECK(CommonPrefix(child->tokens, other->tokens) <
                    static_cast<int64_t>(std::min(child->tokens.size(), other->tokens.size())));
      }
      order.push_back(child);
    }
    if (node == root_.get()) continue;
    ++nodes;
    CAIRN_CHECK(node->block != nullptr && node->block->frozen());
    account(node->block.get(), node->block->bytes());
    int64_t previous = 0;
    for (const CheckpointEntry& c : node->checkpoints) {
      CAIRN_CHECK(config_.hybrid);
      CAIRN_CHECK(c.position > previous);
      previous = c.position;
      CAIRN_CHECK(c.position > node->start && c.position <= node->end());
      CAIRN_CHECK(c.snapshot != nullptr && c.snapshot->position() == c.position);
      CAIRN_CHECK(c.last_use.load() >= c.created);
      account(c.snapshot.get(), c.snapshot->held_bytes());
      if (checkpoint_objects.insert(c.snapshot.get()).second) checkpoint_bytes += c.snapshot->held_bytes();
      ++checkpoints;
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const TrieNode* node = *it;
    int64_t leaves = node->is_leaf() ? (node == root_.get() ? 0 : 1) : 0;
    for (const auto& child : node->children) leaves += child->leaves;
    CAIRN_CHECK(node->leaves == leaves);
  }
  CAIRN_CHECK(nodes == nodes_);
  CAIRN_CHECK(checkpoints == checkpoints_);
  CAIRN_CHECK(bytes == ledger_.total());
  CAIRN_CHECK(objects.size() == ledger_.objects());
  CAIRN_CHECK(ledger_.total() <= budget_bytes_);
  CAIRN_CHECK(checkpoint_bytes == checkpoint_ledger_.total());
  CAIRN_CHECK(checkpoint_ledger_.objects() == checkpoint_objects.size());
  CAIRN_CHECK(checkpoint_ledger_.total() <= checkpoint_budget_bytes_);
}

}  // namespace cairn::cache
