// PrefixCache eviction: what goes first when bytes exceed the budget.
//
// Order (each tier least-recently-used first; see docs/prefix-cache.md):
//   0. dead blocks (hybrid): leaf blocks holding no checkpoint. No hybrid
//      lookup can ever reuse KV past the deepest checkpoint, so they cost
//      nothing but diagnostics detail.
//   1. superseded checkpoints (hybrid): boundary / message / end checkpoints
//      on a path used by one entry only, with a checkpoint created by a later
//      request deeper on the same path and no hit since. The conversation has
//      moved on; they only serve branching back to an old turn. Rungs (the
//      ladder, never re-created) and anchors (fan-out points) are not in this
//      tier.
//   2. leaf blocks (conversation tails), with their checkpoints. Only leaves
//      go (no child is ever orphaned), so an entry shrinks from its tail and
//      shared prefixes (touched by every entry that uses them, so never older
//      than their descendants) are evicted last.
// Before that, checkpoint bytes alone are held to the checkpoint budget
// (PickCheckpointVictim): fine checkpoints that never served a hit go first.
#include "cache/prefix_cache.h"

#include <algorithm>
#include <mutex>
#include <tuple>

namespace cairn::cache {

struct PrefixCache::Victim {
  TrieNode* node = nullptr;
  int checkpoint = -1;  // index into node->checkpoints; -1: the leaf node itself
  int tier = 0;
  uint64_t last_use = 0;
  int64_t position = 0;
  EvictReason reason = EvictReason::kLru;

  // Lower tier first, then older, then deeper (trim a tail before its parent).
  bool Before(const Victim& o) const {
    return std::make_tuple(tier, last_use, -position) < std::make_tuple(o.tier, o.last_use, -o.position);
  }
};

bool PrefixCache::PickVictim(bool shed_only, Victim* out) const {
  // Pre-order list of nodes, then a reverse pass fills newest_below.
  std::vector<TrieNode*> order;
  order.reserve(static_cast<size_t>(nodes_) + 1);
  order.push_back(root_.get());
  for (size_t i = 0; i < order.size(); ++i) {
    for (const auto& child : order[i]->children) order.push_back(child.get());
  }
  for (TrieNode* node : order) node->newest_below = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    TrieNode* node = *it;
    if (node->parent == nullptr) continue;
    uint64_t newest = node->newest_below;
    for (const CheckpointEntry& c : node->checkpoints) newest = std::max(newest, c.created);
    node->parent->newest_below = std::max(node->parent->newest_below, newest);
  }

  bool found = false;
  auto offer = [&](const Victim& v) {
    if (!found || v.Before(*out)) {
      *out = v;
      found = true;
    }
  };
  for (TrieNode* node : order) {
    if (node == root_.get()) continue;
    const bool leaf = node->is_leaf();
    if (config_.hybrid && leaf && node->checkpoints.empty()) {
      offer({node, -1, 0, node->last_use.load(), node->start, EvictReason::kDeadBlocks});
    }
    if (config_.hybrid && node->leaves == 1) {
      // newest checkpoint strictly deeper than checkpoint i on this single-entry path
      uint64_t deeper = node->newest_below;
      for (int i = static_cast<int>(node->checkpoints.size()) - 1; i >= 0; --i) {
        const CheckpointEntry& c = node->checkpoints[i];
        // Under memory pressure (shed_only) shallow rungs and marks of a single-entry
        // path go too: a deeper checkpoint of the same conversation serves
        // its next turn, and other sessions share nothing below this node.
        const bool supersedable = c.kind == CheckpointKind::kBoundary || c.kind == CheckpointKind::kMessage ||
                                  c.kind == CheckpointKind::kEnd ||
                                  (shed_only && (c.kind == CheckpointKind::kRung || c.kind == CheckpointKind::kMark));
        if (supersedable && deeper > c.last_use.load()) {
          offer({node, i, 1, c.last_use.load(), c.position, EvictReason::kSuperseded});
        }
        deeper = std::max(deeper, c.created);
      }
    }
    if (!shed_only && leaf) offer({node, -1, 2, node->last_use.load(), node->start, EvictReason::kLru});
  }
  return found;
}

bool PrefixCache::PickCheckpointVictim(Victim* out) const {
  // Tiers, each least-recently-used first (deeper first on a tie):
  //   0. fine checkpoints (rung, mark, tail) that never served a hit:
  //      placements that did not pay off;
  //   1. fine checkpoints that did;
  //   2. boundary, message and end checkpoints (a conversation's resume points);
  //   3. anchors (where several sessions fan out).
  bool found = false;
  std::vector<const TrieNode*> stack{root_.get()};
  while (!stack.empty()) {
    const TrieNode* node = stack.back();
    stack.pop_back();
    for (const auto& child : node->children) stack.push_back(child.get());
    for (size_t i = 0; i < node->checkpoints.size(); ++i) {
      const CheckpointEntry& c = node->checkpoints[i];
      const bool fine = c.kind == CheckpointKind::kRung || c.kind == CheckpointKind::kMark ||
                        c.kind == CheckpointKind::kTail;
      const int tier = fine ? (c.hits.load() == 0 ? 0 : 1) : c.kind == CheckpointKind::kAnchor ? 3 : 2;
      const Victim v{const_cast<TrieNode*>(node), static_cast<int>(i), tier, c.last_use.load(), c.position,
                     EvictReason::kCheckpointBudget};
      if (!found || v.Before(*out)) {
        *out = v;
        found = true;
      }
    }
  }
  return found;
}

void PrefixCache::AddSnapshotBytes(const RecurrentSnapshot* snapshot) {
  ledger_.Add(snapshot, snapshot->held_bytes());
  checkpoint_ledger_.Add(snapshot, snapshot->held_bytes());
}

size_t PrefixCache::RemoveSnapshotBytes(const RecurrentSnapshot* snapshot) {
  checkpoint_ledger_.Remove(snapshot);
  return ledger_.Remove(snapshot);
}

void PrefixCache::RemoveCheckpoint(TrieNode* node, size_t index, EvictReason reason) {
  CheckpointEntry& c = node->checkpoints[index];
  evicted_bytes_.fetch_add(RemoveSnapshotBytes(c.snapshot.get()), std::memory_order_relaxed);
  node->checkpoints.erase(node->checkpoints.begin() + static_cast<std::ptrdiff_t>(index));
  --checkpoints_;
  evictions_[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
}

void PrefixCache::RemoveLeaf(TrieNode* leaf, EvictReason reason) {
  CAIRN_CHECK(leaf->is_leaf() && leaf->parent != nullptr);
  size_t freed = 0;
  for (const CheckpointEntry& c : leaf->checkpoints) freed += RemoveSnapshotBytes(c.snapshot.get());
  checkpoints_ -= static_cast<int64_t>(leaf->checkpoints.size());
  freed += ledger_.Remove(leaf->block.get());
  evicted_bytes_.fetch_add(freed, std::memory_order_relaxed);
  evictions_[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);

  TrieNode* parent = leaf->parent;
  auto& siblings = parent->children;
  siblings.erase(std::find_if(siblings.begin(), siblings.end(),
                              [&](const std::unique_ptr<TrieNode>& c) { return c.get() == leaf; }));
  --nodes_;
  // The entry count drops unless the parent becomes a leaf in its place.
  if (!siblings.empty() || parent == root_.get()) {
    for (TrieNode* a = parent; a != nullptr; a = a->parent) --a->leaves;
  }
}

void PrefixCache::EvictVictim(const Victim& v, EvictReason reason) {
  if (v.checkpoint >= 0) {
    RemoveCheckpoint(v.node, static_cast<size_t>(v.checkpoint), reason);
  } else {
    RemoveLeaf(v.node, reason);
  }
}

void PrefixCache::EvictToBudget() {
  Victim v;
  while (checkpoint_ledger_.total() > checkpoint_budget_bytes_ && PickCheckpointVictim(&v)) EvictVictim(v, v.reason);
  while (ledger_.total() > budget_bytes_ && PickVictim(false, &v)) EvictVictim(v, v.reason);
}

void PrefixCache::Shed(ShedLevel level) {
  std::unique_lock lock(mu_);
  if (level == ShedLevel::kCritical) {
    ReleaseAll(EvictReason::kShed);
    return;
  }
  Victim v;
  while (PickVictim(true, &v)) EvictVictim(v, EvictReason::kShed);
}

bool PrefixCache::RemoveEntry(std::string_view id) {
  ChainKey wanted;
  if (!ChainKey::FromHex(id, &wanted)) return false;
  std::unique_lock lock(mu_);
  std::vector<TrieNode*> stack{root_.get()};
  while (!stack.empty()) {
    TrieNode* node = stack.back();
    stack.pop_back();
    for (const auto& child : node->children) stack.push_back(child.get());
    if (!node->is_leaf() || node == root_.get() || !(PathKey(node) == wanted)) continue;
    // Remove from the leaf up while the node serves this entry alone.
    TrieNode* victim = node;
    while (victim != root_.get() && victim->is_leaf() && victim->leaves == 1) {
      TrieNode* parent = victim->parent;
      RemoveLeaf(victim, EvictReason::kClear);
      if (parent == root_.get() || !parent->is_leaf()) break;
      victim = parent;
    }
    return true;
  }
  return false;
}

void PrefixCache::ReleaseAll(EvictReason reason) {
  evictions_[static_cast<int>(reason)].fetch_add(static_cast<uint64_t>(nodes_ + checkpoints_),
                                                 std::memory_order_relaxed);
  evicted_bytes_.fetch_add(ledger_.total(), std::memory_order_relaxed);
  // Iterative teardown: a 1M-token path is ~16k nodes deep.
  std::vector<std::unique_ptr<TrieNode>> pending;
  for (auto& child : root_->children) pending.push_back(std::move(child));
  root_->children.clear();
  while (!pending.empty()) {
    std::unique_ptr<TrieNode> node = std::move(pending.back());
    pending.pop_back();
    for (auto& child : node->children) pending.push_back(std::move(child));
  }
  root_->leaves = 0;
  ledger_.Clear();
  checkpoint_ledger_.Clear();
  nodes_ = 0;
  checkpoints_ = 0;
}

void PrefixCache::Clear() {
  std::unique_lock lock(mu_);
  ReleaseAll(EvictReason::kClear);
}

void PrefixCache::SetBudget(size_t budget_bytes) {
  std::unique_lock lock(mu_);
  budget_bytes_ = budget_bytes;
  checkpoint_budget_bytes_ = static_cast<size_t>(static_cast<double>(budget_bytes) * config_.checkpoint_budget_fraction);
  EvictToBudget();
}

}  // namespace cairn::cache
