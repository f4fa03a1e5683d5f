// The prefix cache: one token-block trie shared by every session of a model.
//
// Dense models (trim mode): Lookup reuses the longest common prefix with any
// cached path, minus at least one token (the last prompt token is always
// recomputed so logits exist). Hybrid models (checkpoint mode): reuse only at a
// position carrying a recurrent checkpoint (<= common prefix, < prompt length),
// with KV truncated to that position.
//
// Engine protocol (see docs/prefix-cache.md):
//   1. r = cache.Lookup({prompt, messages, detokenize});
//   2. restore: seq.blocks = r.blocks (copy-on-write the last one before
//      writing), restore r.snapshot (hybrid), start prefill at r.reuse_tokens;
//   3. marks = PlanCheckpoints(config, {n, stable, messages, r.reuse_tokens, r.lcp,
//      r.cached_checkpoints}) and snapshot the recurrent state at each mark;
//   4. after the request ends (done or cancelled): cache.Insert(verified tokens,
//      seq.blocks, snapshots taken). A failed request simply never inserts:
//      nothing it computed reaches the cache, so nothing must be invalidated.
//
// Memory: bytes held = unique KV blocks + unique snapshots (with reply-tail
// logs), <= budget after every call; snapshot bytes alone <= the checkpoint
// budget (config.checkpoint_budget_fraction of it). Evicting only drops the cache's references: a running request
// keeps its blocks/snapshots alive through its own shared_ptrs.
//
// Thread safety: all methods are safe to call concurrently. Lookup, List and
// Stats take a shared lock (LRU clocks and counters are relaxed atomics);
// Insert, Shed, Clear and SetBudget take the exclusive lock.
#pragma once

#include <atomic>
#include <memory>
#include <shared_mutex>
#include <span>
#include <string_view>
#include <vector>

#include "cache/byte_ledger.h"
#include "cache/cache_config.h"
#include "cache/cache_types.h"
#include "cache/trie_node.h"

namespace cairn::cache {

struct InsertResult {
  int64_t new_blocks = 0;        // blocks adopted by the cache
  int64_t shared_blocks = 0;     // blocks already cached along the path
  int64_t new_checkpoints = 0;
  bool refused_short_prompt = false;
};

enum class ShedLevel : uint8_t {
  kWarn,      // drop dead blocks, superseded checkpoints and shallow rungs; keep every entry
  kCritical,  // drop everything
};

class PrefixCache {
 public:
  // Throws cairn::Error on an invalid config.
  explicit PrefixCache(const PrefixCacheConfig& config);
  ~PrefixCache();
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  LookupResult Lookup(const LookupRequest& request);
  LookupResult Lookup(std::span<const Token> tokens) { return Lookup(LookupRequest{tokens, {}, {}}); }

  // Adds a sequence: `tokens` are verified tokens whose KV is in `blocks`
  // (block i = positions [i*B, (i+1)*B); at least ceil(n/B) non-null blocks).
  // `checkpoints` (hybrid; ignored for dense models) need 1 <= position <= n and
  // snapshot->position() == position. Adopted blocks are frozen: the caller
  // must copy-on-write before writing into any of them again. Blocks already
  // cached along the path are kept (the caller's pointer is not adopted).
  // Throws cairn::Error on malformed arguments (nothing is changed then).
  InsertResult Insert(std::span<const Token> tokens, const KvBlockTable& blocks,
                      std::span<const Checkpoint> checkpoints = {});

  void Shed(ShedLevel level);
  void Clear();
  // Drops the entry whose id (EntryInfo::id) is `id`: its leaf and every node
  // no other entry shares. false when no entry has that id.
  bool RemoveEntry(std::string_view id);
  // Evicts at once when the new budget is below the bytes held.
  void SetBudget(size_t budget_bytes);

  std::vector<EntryInfo> List() const;
  CacheStats Stats() const;
  const PrefixCacheConfig& config() const { return config_; }

  // Test hook: recomputes every invariant (structure, frozen blocks, leaf
  // counts, exact bytes, budget) and aborts with a message on a violation.
  void CheckInvariants() const;

 private:
  struct Victim;
  struct PathStep;

  // Insert helpers (exclusive lock held).
  void ValidateInsert(std::span<const Token> tokens, const KvBlockTable& blocks,
                      std::span<const Checkpoint> checkpoints) const;
  size_t EstimateNewBytes(std::span<const Token> tokens, const KvBlockTable& blocks,
                          std::span<const Checkpoint> checkpoints) const;
  bool ShortPromptGuardRefuses(int64_t tokens, size_t new_bytes) const;
  void EnforceLadderCap(TrieNode* leaf);

  // Eviction (eviction.cc; exclusive lock held).
  void EvictToBudget();
  bool PickVictim(bool shed_only, Victim* victim) const;
  bool PickCheckpointVictim(Victim* victim) const;
  void EvictVictim(const Victim& victim, EvictReason reason);
  void RemoveCheckpoint(TrieNode* node, size_t index, EvictReason reason);
  void RemoveLeaf(TrieNode* leaf, EvictReason reason);
  void ReleaseAll(EvictReason reason);
  // Snapshot accounting: the total ledger and the checkpoint ledger move together.
  void AddSnapshotBytes(const RecurrentSnapshot* snapshot);
  size_t RemoveSnapshotBytes(const RecurrentSnapshot* snapshot);  // bytes freed

  uint64_t Tick() { return clock_.fetch_add(1, std::memory_order_relaxed) + 1; }

  PrefixCacheConfig config_;
  mutable std::shared_mutex mu_;
  std::unique_ptr<TrieNode> root_;
  ByteLedger ledger_;             // KV blocks and snapshots
  ByteLedger checkpoint_ledger_;  // snapshots only (a subset of ledger_)
  size_t budget_bytes_;
  size_t checkpoint_budget_bytes_;
  int64_t nodes_ = 0;       // excluding the root
  int64_t checkpoints_ = 0;
  std::atomic<uint64_t> clock_{0};

  // Counters (relaxed atomics: bumped under the shared lock too).
  std::atomic<uint64_t> lookups_{0};
  std::atomic<uint64_t> hits_[kNumHitKinds] = {};
  std::atomic<uint64_t> prompt_tokens_{0};
  std::atomic<uint64_t> reused_tokens_{0};
  std::atomic<uint64_t> inserts_{0};
  std::atomic<uint64_t> inserted_blocks_{0};
  std::atomic<uint64_t> inserted_checkpoints_{0};
  std::atomic<uint64_t> short_prompt_refusals_{0};
  std::atomic<uint64_t> evictions_[kNumEvictReasons] = {};
  std::atomic<uint64_t> evicted_bytes_{0};
};

}  // namespace cairn::cache
