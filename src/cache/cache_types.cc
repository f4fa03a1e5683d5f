#include "cache/cache_types.h"

#include "cache/cache_config.h"
#include "core/error.h"

namespace cairn::cache {

std::string_view ToString(CheckpointKind kind) {
  switch (kind) {
    case CheckpointKind::kBoundary: return "boundary";
    case CheckpointKind::kMessage: return "message";
    case CheckpointKind::kRung: return "rung";
    case CheckpointKind::kAnchor: return "anchor";
    case CheckpointKind::kEnd: return "end";
    case CheckpointKind::kMark: return "mark";
    case CheckpointKind::kTail: return "tail";
  }
  return "?";
}

std::string_view ToString(HitKind kind) {
  switch (kind) {
    case HitKind::kMiss: return "miss";
    case HitKind::kTrim: return "trim";
    case HitKind::kBoundary: return "boundary";
    case HitKind::kMessage: return "message";
    case HitKind::kRung: return "rung";
    case HitKind::kAnchor: return "anchor";
    case HitKind::kEnd: return "end";
    case HitKind::kMark: return "mark";
    case HitKind::kTail: return "tail";
  }
  return "?";
}

std::string_view ToString(Role role) {
  switch (role) {
    case Role::kSystem: return "system";
    case Role::kUser: return "user";
    case Role::kAssistant: return "assistant";
    case Role::kTool: return "tool";
    case Role::kOther: return "other";
  }
  return "?";
}

std::string_view ToString(EvictReason reason) {
  switch (reason) {
    case EvictReason::kDeadBlocks: return "dead_blocks";
    case EvictReason::kSuperseded: return "superseded";
    case EvictReason::kLru: return "lru";
    case EvictReason::kLadderCap: return "ladder_cap";
    case EvictReason::kShed: return "shed";
    case EvictReason::kClear: return "clear";
    case EvictReason::kCheckpointBudget: return "checkpoint_budget";
  }
  return "?";
}

HitKind HitKindOf(CheckpointKind kind) {
  switch (kind) {
    case CheckpointKind::kBoundary: return HitKind::kBoundary;
    case CheckpointKind::kMessage: return HitKind::kMessage;
    case CheckpointKind::kRung: return HitKind::kRung;
    case CheckpointKind::kAnchor: return HitKind::kAnchor;
    case CheckpointKind::kEnd: return HitKind::kEnd;
    case CheckpointKind::kMark: return HitKind::kMark;
    case CheckpointKind::kTail: return HitKind::kTail;
  }
  return HitKind::kMiss;
}

void PrefixCacheConfig::Validate() const {
  if (block_tokens <= 0) Fail("prefix cache: block_tokens must be positive (got {})", block_tokens);
  if (rung_tokens < 0) Fail("prefix cache: --cache-rung-tokens must be >= 0 (got {})", rung_tokens);
  if (min_reuse < 1) Fail("prefix cache: min_reuse must be >= 1 (got {})", min_reuse);
  if (short_prompt_ratio < 1) Fail("prefix cache: short_prompt_ratio must be >= 1 (got {})", short_prompt_ratio);
  if (max_checkpoints_per_path < 1) {
    Fail("prefix cache: max_checkpoints_per_path must be >= 1 (got {})", max_checkpoints_per_path);
  }
  if (max_message_checkpoints < 0) {
    Fail("prefix cache: max_message_checkpoints must be >= 0 (got {})", max_message_checkpoints);
  }
  if (max_mark_checkpoints < 0) {
    Fail("prefix cache: max_mark_checkpoints must be >= 0 (got {})", max_mark_checkpoints);
  }
  if (tail_tokens < 0) Fail("prefix cache: --cache-tail-tokens must be >= 0 (got {})", tail_tokens);
  if (!(checkpoint_budget_fraction > 0.0 && checkpoint_budget_fraction <= 1.0)) {
    Fail("prefix cache: --cache-checkpoint-fraction must be in (0, 1] (got {})", checkpoint_budget_fraction);
  }
}

}  // namespace cairn::cache
