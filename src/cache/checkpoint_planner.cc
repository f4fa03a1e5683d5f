#include "cache/checkpoint_planner.h"

#include <algorithm>
#include <map>

namespace cairn::cache {
namespace {

// Higher wins when two reasons pick the same position.
int KindRank(CheckpointKind kind) {
  switch (kind) {
    case CheckpointKind::kBoundary: return 5;
    case CheckpointKind::kAnchor: return 4;
    case CheckpointKind::kMessage: return 3;
    case CheckpointKind::kMark: return 2;
    case CheckpointKind::kRung: return 1;
    case CheckpointKind::kEnd: return 0;
    case CheckpointKind::kTail: return 0;
  }
  return 0;
}

}  // namespace

std::vector<PlannedCheckpoint> PlanCheckpoints(const PrefixCacheConfig& config,
                                               const CheckpointPlanInput& in) {
  std::vector<PlannedCheckpoint> out;
  if (!config.enabled || !config.hybrid || in.prompt_tokens <= 1) return out;
  const int64_t n = in.prompt_tokens;
  const int64_t stable = std::clamp<int64_t>(in.stable_boundary, 0, n - 1);

  // Prefill only computes states in (reuse, n); a snapshot at n itself could
  // never serve a retry (nothing left to forward, no logits).
  auto usable = [&](int64_t p) {
    return p > in.reuse_tokens && p < n && p >= config.min_reuse &&
           std::find(in.cached_checkpoints.begin(), in.cached_checkpoints.end(), p) ==
               in.cached_checkpoints.end();
  };
  std::map<int64_t, CheckpointKind> marks;
  auto add = [&](int64_t p, CheckpointKind kind) {
    if (!usable(p)) return;
    auto [it, inserted] = marks.emplace(p, kind);
    if (!inserted && KindRank(kind) > KindRank(it->second)) it->second = kind;
  };

  // Rungs at multiples of rung_tokens strictly below the boundary. Positions at
  // or below reuse are already on the shared path (rung inheritance).
  if (config.rung_tokens > 0) {
    const int64_t first = (in.reuse_tokens / config.rung_tokens + 1) * config.rung_tokens;
    for (int64_t p = first; p < stable; p += config.rung_tokens) add(p, CheckpointKind::kRung);
  }
  // The last few message starts: where the next request re-renders history
  // (templates that drop old reasoning diverge at the last assistant turn).
  // Each snapshot costs tens of MiB, hence the cap.
  int taken = 0;
  for (auto it = in.messages.rbegin(); it != in.messages.rend() && taken < config.max_message_checkpoints;
       ++it) {
    if (it->position > stable || !usable(it->position)) continue;
    add(it->position, CheckpointKind::kMessage);
    ++taken;
  }
  // Content-aware marks: the first few usable volatile-looking line starts of
  // the first turn (paths, dates, hashes), in the builder's priority order,
  // where another session's prompt of the same client tends to diverge; one
  // state copy each inside the pass, at most mark_budget_fraction of the
  // checkpoint budget per request. Marks already cached on this prefix are
  // not usable, so successive sessions plant them further along the prompt.
  int64_t max_marks = config.max_mark_checkpoints;
  if (in.snapshot_bytes > 0) {
    const double share = static_cast<double>(config.checkpoint_budget_bytes()) * config.mark_budget_fraction;
    max_marks = std::min<int64_t>(max_marks, static_cast<int64_t>(share / static_cast<double>(in.snapshot_bytes)));
  }
  taken = 0;
  for (const int64_t p : in.marks) {
    if (taken >= max_marks) break;
    if (p >= stable || !usable(p)) continue;
    add(p, CheckpointKind::kMark);
    ++taken;
  }
  // Anchor at the exact divergence point when a long shared prefix could not be
  // reused (no checkpoint near it): the next request of this shape hits here.
  if (in.lcp >= config.min_reuse && in.lcp - in.reuse_tokens >= config.min_reuse && in.lcp < n) {
    add(in.lcp, CheckpointKind::kAnchor);
  }
  add(stable, CheckpointKind::kBoundary);

  out.reserve(marks.size());
  for (const auto& [p, kind] : marks) out.push_back({p, kind});
  return out;
}

}  // namespace cairn::cache
