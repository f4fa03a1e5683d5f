// Value types exchanged between the prefix cache and the engine.
//
// Positions are absolute token counts: a checkpoint "at position p" is the
// recurrent state after the first p tokens (tokens [0, p) consumed), and KV
// block i holds positions [i * B, (i + 1) * B).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/kv_block.h"

namespace cairn::cache {

using Token = int32_t;

// Why a recurrent checkpoint was taken (drives hit reporting and eviction).
enum class CheckpointKind : uint8_t {
  kBoundary,  // stable prompt boundary (prompt end minus the template's unstable tail)
  kMessage,   // start of a chat message
  kRung,      // multiple of rung_tokens from position 0
  kAnchor,    // exact divergence point of a request that shared a long prefix but missed
  kEnd,       // end of prompt + verified generated tokens (taken after generation)
  // Start of a line of the first turn that looks volatile across sessions (a
  // path, date, hash, environment block; engine/volatile_lines.h): where
  // another session's prompt is likely to diverge. Appended last: the disk
  // tier stores kinds by value.
  kMark,
  // A reply tail (model/reply_tail.h): the state before the last tokens of a
  // generated reply plus their recurrence inputs, so any position among them
  // is restorable by replaying; the next prompt's re-rendered copy of the
  // reply diverges near its end. The disk tier keeps only the base state.
  kTail,
};
inline constexpr int kNumCheckpointKinds = 7;

enum class HitKind : uint8_t { kMiss, kTrim, kBoundary, kMessage, kRung, kAnchor, kEnd, kMark, kTail };
inline constexpr int kNumHitKinds = 9;

enum class Role : uint8_t { kSystem, kUser, kAssistant, kTool, kOther };

enum class EvictReason : uint8_t {
  kDeadBlocks,  // hybrid: KV blocks past every checkpoint (unreachable for reuse)
  kSuperseded,  // checkpoint of an older turn with a newer one deeper on its path
  kLru,         // least-recently-used leaf block (conversation tail)
  kLadderCap,   // thinning a path over max_checkpoints_per_path
  kShed,        // memory-pressure shed
  kClear,       // Clear() / model unload
  kCheckpointBudget,  // checkpoint bytes over their share of the budget
};
inline constexpr int kNumEvictReasons = 7;

std::string_view ToString(CheckpointKind kind);
std::string_view ToString(HitKind kind);
std::string_view ToString(Role role);
std::string_view ToString(EvictReason reason);
HitKind HitKindOf(CheckpointKind kind);

// A recurrent snapshot the engine took at `position` (snapshot->position() == position).
struct Checkpoint {
  int64_t position = 0;
  RecurrentSnapshotRef snapshot;
  CheckpointKind kind = CheckpointKind::kBoundary;
};

// Token position where a chat message starts in the rendered prompt.
struct MessageStart {
  int64_t position = 0;
  Role role = Role::kOther;
};

// Turns tokens into text for miss diagnostics (may be empty).
using DetokenizeFn = std::function<std::string(std::span<const Token>)>;

struct LookupRequest {
  std::span<const Token> tokens;            // the whole rendered prompt
  std::span<const MessageStart> messages;   // ascending; diagnostics only (may be empty)
  DetokenizeFn detokenize;                  // optional, for snippets in the reason
};

// Where the prompt left the best cached path (valid when position >= 0).
struct Divergence {
  int64_t position = -1;      // first token that differs (= lcp)
  int message_index = -1;     // message containing `position` (-1: unknown)
  Role role = Role::kOther;
  std::string prompt_text;    // a few detokenized tokens from `position`, each side
  std::string cached_text;
};

// The engine's restore plan.
struct LookupResult {
  HitKind kind = HitKind::kMiss;
  // Tokens to skip: prefill prompt[reuse_tokens:] on top of `blocks` (+ `snapshot`).
  // Always < prompt length (the last token is recomputed so logits exist).
  int64_t reuse_tokens = 0;
  // ceil(reuse_tokens / B) frozen blocks (pointer copies). The last one may be
  // partially valid; the engine copy-on-writes before writing into it.
  KvBlockTable blocks;
  // Hybrid only: recurrent state at exactly reuse_tokens, or a reply tail's
  // at reuse_tokens - replay_tokens whose log the engine replays
  // (model::Model::RestorePrefix).
  RecurrentSnapshotRef snapshot;
  int64_t replay_tokens = 0;
  // True common-prefix length with the best cached path (may exceed reuse).
  int64_t lcp = 0;
  // Checkpoint positions already cached along the matched path (<= lcp);
  // the planner does not re-save them (rung inheritance).
  std::vector<int64_t> cached_checkpoints;
  // Empty on a full hit; otherwise what happened, in words a person can act on.
  std::string reason;
  Divergence divergence;
};

// Snapshot of the cache counters (GET /metrics).
struct CacheStats {
  uint64_t lookups = 0;
  uint64_t hits[kNumHitKinds] = {};     // indexed by HitKind (kMiss counts misses)
  uint64_t prompt_tokens = 0;           // sum of looked-up prompt lengths
  uint64_t reused_tokens = 0;           // sum of reuse_tokens
  uint64_t inserts = 0;
  uint64_t inserted_blocks = 0;         // blocks adopted (not already present)
  uint64_t inserted_checkpoints = 0;
  uint64_t short_prompt_refusals = 0;
  uint64_t evictions[kNumEvictReasons] = {};  // evicted items by reason
  uint64_t evicted_bytes = 0;
  size_t bytes_held = 0;
  size_t budget_bytes = 0;
  size_t checkpoint_bytes = 0;          // snapshots and reply-tail logs (part of bytes_held)
  size_t checkpoint_budget_bytes = 0;
  int64_t blocks_held = 0;
  int64_t checkpoints_held = 0;
  int64_t nodes = 0;
  int64_t entries = 0;                  // leaves = cached conversations / branches
};

struct CheckpointInfo {
  int64_t position = 0;
  CheckpointKind kind = CheckpointKind::kBoundary;
  size_t bytes = 0;
  uint64_t hits = 0;
  uint64_t last_use = 0;   // cache clock (one tick per lookup/insert)
  int64_t replay_tokens = 0;  // reply tail: positions after `position` it restores
};

// One root-to-leaf path (a conversation or branch) for GET /cache.
struct EntryInfo {
  std::string id;              // ChainKey of the whole path, hex (chain_key.h); DELETE /cache/entries/{id}
  int64_t tokens = 0;          // path length
  int64_t shared_tokens = 0;   // leading tokens shared with other entries
  size_t bytes = 0;            // bytes of the path's blocks and snapshots
  size_t exclusive_bytes = 0;  // bytes freed if this entry alone were dropped
  uint64_t last_use = 0;
  uint64_t hits = 0;           // lookups that reused this path's tip block
  std::vector<CheckpointInfo> checkpoints;  // ascending position
};

}  // namespace cairn::cache
