// Checkpoint bytes are held to config.checkpoint_budget_fraction of the budget
// (cache/eviction.cc PickCheckpointVictim): fine checkpoints that never served
// a hit go first, then fine ones that did, then resume points, anchors last.
#include <gtest/gtest.h>

#include "fake_state.h"

namespace cairn::cache {
namespace {

using testing::ColdTable;
using testing::Seq;
using testing::SnapshotOf;
using testing::TinyLayout;

constexpr int kB = 16;

// Room for exactly four snapshots of checkpoints; KV has plenty of room.
PrefixCacheConfig FourSnapshots() {
  PrefixCacheConfig config = testing::HybridConfig(kB, /*rung_tokens=*/0, 40 * testing::kSnapshotBytes);
  config.checkpoint_budget_fraction = 0.1;  // 4 snapshots
  return config;
}

std::vector<int64_t> Positions(const PrefixCache& cache) {
  std::vector<int64_t> out;
  for (const EntryInfo& e : cache.List()) {
    for (const CheckpointInfo& c : e.checkpoints) out.push_back(c.position);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CheckpointBudget, FineCheckpointsThatNeverHitGoFirst) {
  PrefixCache cache(FourSnapshots());
  const KvLayout layout = TinyLayout(kB);
  const auto prompt = Seq(100);
  cache.Insert(prompt, ColdTable(layout, prompt),
               std::vector<Checkpoint>{{10 + 10, SnapshotOf(prompt, 20), CheckpointKind::kMark},
                                       {40, SnapshotOf(prompt, 40), CheckpointKind::kMark},
                                       {60, SnapshotOf(prompt, 60), CheckpointKind::kAnchor},
                                       {97, SnapshotOf(prompt, 97), CheckpointKind::kBoundary}});
  EXPECT_EQ(cache.Stats().checkpoint_bytes, 4 * testing::kSnapshotBytes);
  // The mark at 20 serves a hit; the one at 40 never does.
  auto diverged = prompt;
  diverged[30] = -1;
  EXPECT_EQ(cache.Lookup(diverged).reuse_tokens, 20);
  // Two more checkpoints: the unhit mark goes, then the hit one (fine before
  // resume points and anchors).
  cache.Insert(prompt, ColdTable(layout, prompt),
               std::vector<Checkpoint>{{80, SnapshotOf(prompt, 80), CheckpointKind::kMessage}});
  EXPECT_EQ(Positions(cache), (std::vector<int64_t>{20, 60, 80, 97}));
  cache.Insert(prompt, ColdTable(layout, prompt),
               std::vector<Checkpoint>{{90, SnapshotOf(prompt, 90), CheckpointKind::kMessage}});
  EXPECT_EQ(Positions(cache), (std::vector<int64_t>{60, 80, 90, 97}));
  // Then the least recently used resume point; the anchor stays.
  cache.Insert(prompt, ColdTable(layout, prompt),
               std::vector<Checkpoint>{{50, SnapshotOf(prompt, 50), CheckpointKind::kMessage}});
  const std::vector<int64_t> left = Positions(cache);
  EXPECT_EQ(left.size(), 4u);
  EXPECT_NE(std::find(left.begin(), left.end(), 60), left.end());
  const CacheStats s = cache.Stats();
  EXPECT_LE(s.checkpoint_bytes, s.checkpoint_budget_bytes);
  EXPECT_EQ(s.checkpoint_budget_bytes, 4 * testing::kSnapshotBytes);
  EXPECT_GE(s.evictions[static_cast<int>(EvictReason::kCheckpointBudget)], 3u);
  cache.CheckInvariants();
}

TEST(CheckpointBudget, ShrinkingTheBudgetShrinksTheCheckpointShare) {
  PrefixCacheConfig config = FourSnapshots();
  config.checkpoint_budget_fraction = 0.5;
  PrefixCache cache(config);
  const KvLayout layout = TinyLayout(kB);
  const auto prompt = Seq(200);
  std::vector<Checkpoint> cps;
  for (int64_t p = 10; p < 200; p += 20) cps.push_back({p, SnapshotOf(prompt, p), CheckpointKind::kRung});
  cache.Insert(prompt, ColdTable(layout, prompt), cps);
  EXPECT_EQ(cache.Stats().checkpoints_held, 10);
  cache.SetBudget(20 * testing::kSnapshotBytes);
  const CacheStats s = cache.Stats();
  EXPECT_EQ(s.checkpoint_budget_bytes, 10 * testing::kSnapshotBytes);
  EXPECT_LE(s.checkpoint_bytes, s.checkpoint_budget_bytes);
  cache.CheckInvariants();
}

}  // namespace
}  // namespace cairn::cache
