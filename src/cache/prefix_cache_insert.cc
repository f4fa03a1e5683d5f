// PrefixCache::Insert: adding a sequence's blocks and checkpoints to the trie.
#include <algorithm>
#include <mutex>

#include "cache/prefix_cache.h"
#include "core/error.h"

namespace cairn::cache {
namespace {

// How an inserted block relates to an existing child of the current node.
struct ChildMatch {
  TrieNode* exact = nullptr;     // same tokens
  TrieNode* covering = nullptr;  // segment is a strict prefix of the child's tokens
  TrieNode* shorter = nullptr;   // the child (a partial leaf) is a strict prefix of the segment
};

ChildMatch MatchChild(const TrieNode* node, std::span<const Token> segment, uint64_t hash) {
  ChildMatch m;
  // Fast path: a full block that is already cached (the common case along a
  // shared prefix) is found by hash.
  for (const auto& child : node->children) {
    if (child->hash == hash && child->tokens.size() == segment.size() &&
        std::equal(segment.begin(), segment.end(), child->tokens.begin())) {
      m.exact = child.get();
      return m;
    }
  }
  for (const auto& child : node->children) {
    const size_t size = child->tokens.size();
    if (size == segment.size() && child->hash != hash) continue;
    const int64_t common = CommonPrefix(child->tokens, segment);
    if (common == static_cast<int64_t>(segment.size()) && size == segment.size()) {
      m.exact = child.get();
      return m;
    }
    if (common == static_cast<int64_t>(segment.size())) {
      if (m.covering == nullptr || child->last_use.load() > m.covering->last_use.load()) m.covering = child.get();
    } else if (common == static_cast<int64_t>(size)) {
      m.shorter = child.get();
    }
  }
  return m;
}

int RetentionRank(CheckpointKind kind) {
  switch (kind) {
    case CheckpointKind::kAnchor: return 4;
    case CheckpointKind::kBoundary: return 3;
    case CheckpointKind::kMessage: return 2;
    case CheckpointKind::kEnd: return 1;
    case CheckpointKind::kMark: return 1;
    case CheckpointKind::kTail: return 1;
    case CheckpointKind::kRung: return 0;
  }
  return 0;
}

}  // namespace

void PrefixCache::ValidateInsert(std::span<const Token> tokens, const KvBlockTable& blocks,
                                 std::span<const Checkpoint> checkpoints) const {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t needed = (n + config_.block_tokens - 1) / config_.block_tokens;
  if (static_cast<int64_t>(blocks.size()) < needed) {
    Fail("prefix cache insert: {} tokens need {} KV blocks of {} tokens, got {}", n, needed, config_.block_tokens,
         blocks.size());
  }
  for (int64_t i = 0; i < needed; ++i) {
    if (blocks[i] == nullptr) Fail("prefix cache insert: KV block {} is null", i);
  }
  if (!config_.hybrid) return;
  for (const Checkpoint& c : checkpoints) {
    if (c.position < 1 || c.position > n) {
      Fail("prefix cache insert: checkpoint position {} outside [1, {}]", c.position, n);
    }
    if (c.snapshot == nullptr) Fail("prefix cache insert: checkpoint at {} has no snapshot", c.position);
    if (c.snapshot->position() != c.position) {
      Fail("prefix cache insert: checkpoint at {} holds a snapshot taken at {}", c.position, c.snapshot->position());
    }
  }
}

size_t PrefixCache::EstimateNewBytes(std::span<const Token> tokens, const KvBlockTable& blocks,
                                     std::span<const Checkpoint> checkpoints) const {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t block = config_.block_tokens;
  size_t bytes = 0;
  std::vector<const TrieNode*> path;
  const TrieNode* node = root_.get();
  for (int64_t start = 0; start < n; start += block) {
    const auto segment = tokens.subspan(start, std::min(block, n - start));
    const ChildMatch m = node == nullptr ? ChildMatch{} : MatchChild(node, segment, HashTokens(segment));
    const TrieNode* next = m.exact != nullptr ? m.exact : m.covering;
    if (next == nullptr) bytes += blocks[start / block]->bytes();  // new or upgraded block
    path.push_back(next);
    node = next;
  }
  if (config_.hybrid) {
    for (const Checkpoint& c : checkpoints) {
      const TrieNode* holder = path[(c.position - 1) / block];
      const bool present = holder != nullptr &&
                           std::any_of(holder->checkpoints.begin(), holder->checkpoints.end(),
                                       [&](const CheckpointEntry& e) { return e.position == c.position; });
      if (!present && !ledger_.Holds(c.snapshot.get())) bytes += c.snapshot->held_bytes();
    }
  }
  return bytes;
}

bool PrefixCache::ShortPromptGuardRefuses(int64_t tokens, size_t new_bytes) const {
  if (tokens >= config_.short_prompt_tokens) return false;
  if (ledger_.total() + new_bytes <= budget_bytes_) return false;  // fits: no eviction needed
  // Would evict: refuse when every resident entry is much longer than this one.
  bool any = false;
  std::vector<const TrieNode*> stack{root_.get()};
  while (!stack.empty()) {
    const TrieNode* node = stack.back();
    stack.pop_back();
    if (node != root_.get() && node->is_leaf()) {
      any = true;
      if (node->end() < config_.short_prompt_ratio * tokens) return false;
    }
    for (const auto& child : node->children) stack.push_back(child.get());
  }
  return any;
}

InsertResult PrefixCache::Insert(std::span<const Token> tokens, const KvBlockTable& blocks,
                                 std::span<const Checkpoint> checkpoints) {
  InsertResult result;
  if (!config_.enabled || tokens.empty()) return result;
  ValidateInsert(tokens, blocks, checkpoints);

  std::unique_lock lock(mu_);
  inserts_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t now = Tick();
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t block = config_.block_tokens;

  if (n < config_.short_prompt_tokens && ShortPromptGuardRefuses(n, EstimateNewBytes(tokens, blocks, checkpoints))) {
    short_prompt_refusals_.fetch_add(1, std::memory_order_relaxed);
    result.refused_short_prompt = true;
    return result;
  }

  std::vector<TrieNode*> path;
  path.reserve(static_cast<size_t>(n / block + 1));
  TrieNode* node = root_.get();
  for (int64_t start = 0; start < n; start += block) {
    const auto segment = tokens.subspan(start, std::min(block, n - start));
    const uint64_t hash = HashTokens(segment);
    const KvBlockRef& incoming = blocks[start / block];
    const ChildMatch m = MatchChild(node, segment, hash);
    TrieNode* next = m.exact != nullptr ? m.exact : m.covering;
    if (next != nullptr) {
      ++result.shared_blocks;  // keep the cached block; the caller's pointer is not adopted
    } else if (m.shorter != nullptr) {
      // A partial leaf grows: its tokens are a prefix of ours, so its
      // checkpoints stay valid; the fuller block replaces the old one.
      next = m.shorter;
      ledger_.Remove(next->block.get());
      incoming->Freeze();
      next->block = incoming;
      ledger_.Add(incoming.get(), incoming->bytes());
      next->tokens.assign(segment.begin(), segment.end());
      next->hash = hash;
      ++result.new_blocks;
    } else {
      auto child = std::make_unique<TrieNode>();
      child->parent = node;
      child->start = start;
      child->tokens.assign(segment.begin(), segment.end());
      child->hash = hash;
      incoming->Freeze();
      child->block = incoming;
      ledger_.Add(incoming.get(), incoming->bytes());
      // A new leaf adds an entry unless it extends an existing leaf.
      if (!node->children.empty() || node == root_.get()) {
        for (TrieNode* a = node; a != nullptr; a = a->parent) ++a->leaves;
      }
      next = child.get();
      node->children.push_back(std::move(child));
      ++nodes_;
      ++result.new_blocks;
    }
    next->last_use.Max(now);
    path.push_back(next);
    node = next;
  }

  if (config_.hybrid) {
    for (const Checkpoint& c : checkpoints) {
      TrieNode* holder = path[(c.position - 1) / block];
      auto& list = holder->checkpoints;
      auto it = std::lower_bound(list.begin(), list.end(), c.position,
                                 [](const CheckpointEntry& e, int64_t p) { return e.position < p; });
      if (it != list.end() && it->position == c.position) {
        // Same state (same tokens): keep the cached snapshot, refresh it,
        // unless the new one is a reply tail reaching further (same state
        // plus a longer replay log).
        if (c.snapshot->replay_tokens().size() > it->snapshot->replay_tokens().size()) {
          RemoveSnapshotBytes(it->snapshot.get());
          it->snapshot = c.snapshot;
          AddSnapshotBytes(c.snapshot.get());
          it->kind = c.kind;
        } else if (RetentionRank(c.kind) > RetentionRank(it->kind)) {
          it->kind = c.kind;
        }
        it->last_use.Max(now);
        continue;
      }
      CheckpointEntry entry;
      entry.position = c.position;
      entry.kind = c.kind;
      entry.snapshot = c.snapshot;
      entry.created = now;
      entry.last_use.store(now);
      AddSnapshotBytes(c.snapshot.get());
      list.insert(it, std::move(entry));
      ++checkpoints_;
      ++result.new_checkpoints;
    }
    EnforceLadderCap(path.back());
  }

  inserted_blocks_.fetch_add(result.new_blocks, std::memory_order_relaxed);
  inserted_checkpoints_.fetch_add(result.new_checkpoints, std::memory_order_relaxed);
  EvictToBudget();
  return result;
}

void PrefixCache::EnforceLadderCap(TrieNode* leaf) {
  struct Ref {
    TrieNode* node;
    size_t index;
  };
  for (;;) {
    std::vector<Ref> ladder;  // root to leaf, ascending positions
    std::vector<TrieNode*> nodes;
    for (TrieNode* a = leaf; a != root_.get(); a = a->parent) nodes.push_back(a);
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      for (size_t i = 0; i < (*it)->checkpoints.size(); ++i) ladder.push_back({*it, i});
    }
    if (static_cast<int>(ladder.size()) <= config_.max_checkpoints_per_path) return;
    // Older turns' reply tails, then their end checkpoints go first (the
    // conversation has moved past them); then the densest spot: the
    // checkpoint closest to its lower neighbour (ties: the lower one). Spared:
    // anchors and marks (where other sessions fan out; marks are bounded per
    // request and by the checkpoint budget, unhit ones first), checkpoints
    // other entries share, and the deepest one (this request's resume point).
    auto tier = [](CheckpointKind kind) {
      return kind == CheckpointKind::kTail ? 0 : kind == CheckpointKind::kEnd ? 1 : 2;
    };
    int victim = -1;
    int victim_tier = 0;
    int64_t victim_gap = 0;
    int64_t previous = 0;
    for (size_t i = 0; i + 1 < ladder.size(); ++i) {
      const CheckpointEntry& c = ladder[i].node->checkpoints[ladder[i].index];
      const int64_t gap = c.position - previous;
      previous = c.position;
      if (c.kind == CheckpointKind::kAnchor || c.kind == CheckpointKind::kMark || ladder[i].node->leaves > 1) {
        continue;
      }
      if (victim < 0 || tier(c.kind) < victim_tier || (tier(c.kind) == victim_tier && gap < victim_gap)) {
        victim = static_cast<int>(i);
        victim_tier = tier(c.kind);
        victim_gap = gap;
      }
    }
    if (victim < 0) return;  // only protected checkpoints left: the cap is soft for them
    RemoveCheckpoint(ladder[victim].node, ladder[victim].index, EvictReason::kLadderCap);
  }
}

}  // namespace cairn::cache
