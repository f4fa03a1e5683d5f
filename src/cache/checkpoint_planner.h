// Where the engine must snapshot the recurrent state during prefill (hybrid
// models). A pure function: the engine calls it after Lookup and before
// prefill, splits prefill chunks at the returned positions, snapshots the
// recurrent state when exactly `position` tokens have been consumed, and
// passes the snapshots to PrefixCache::Insert.
//
// Contract: positions are prompt positions only, all strictly inside
// (reuse_tokens, prompt_tokens): prefill consumes verified prompt tokens, so no
// planned checkpoint can fall inside unverified speculative draft tokens. An
// end-of-generation checkpoint (kind kEnd) is the engine's business and must be
// taken at the committed (verified) length, never mid-verification.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/cache_config.h"
#include "cache/cache_types.h"

namespace cairn::cache {

struct CheckpointPlanInput {
  int64_t prompt_tokens = 0;
  // Prompt end minus the chat template's unstable tail (>= 1 token below the end,
  // so an identical retry hits). Clamped to prompt_tokens - 1.
  int64_t stable_boundary = 0;
  std::span<const MessageStart> messages = {};  // ascending positions
  int64_t reuse_tokens = 0;                // LookupResult::reuse_tokens
  int64_t lcp = 0;                         // LookupResult::lcp
  std::span<const int64_t> cached_checkpoints = {};  // LookupResult::cached_checkpoints
  // Volatile-looking line starts of the first turn, in priority order
  // (BuiltPrompt::marks).
  std::span<const int64_t> marks = {};
  // Bytes of one recurrent snapshot (0: unknown); caps the marks per request
  // at config.mark_budget_fraction of the checkpoint budget.
  size_t snapshot_bytes = 0;
};

struct PlannedCheckpoint {
  int64_t position = 0;
  CheckpointKind kind = CheckpointKind::kBoundary;
  bool operator==(const PlannedCheckpoint&) const = default;
};

// Ascending, distinct positions; empty for dense models or a disabled cache.
// On a position wanted for several reasons the kind is the most specific:
// boundary > anchor > message > mark > rung.
std::vector<PlannedCheckpoint> PlanCheckpoints(const PrefixCacheConfig& config,
                                               const CheckpointPlanInput& input);

}  // namespace cairn::cache
