// Budget and eviction order: dead blocks, superseded checkpoints, LRU leaves;
// shared prefixes last; short-prompt guard; interleaved sessions; shedding.
#include <gtest/gtest.h>

#include "fake_state.h"

namespace cairn::cache {
namespace {

using testing::ColdTable;
using testing::Checksum;
using testing::Concat;
using testing::MakeSnapshot;
using testing::RunRequest;
using testing::Seq;
using testing::TinyLayout;

constexpr int kB = 16;
const KvLayout kLayout = TinyLayout(kB);
const size_t kBlock = kLayout.BlockBytes();  // 256 bytes
constexpr size_t kSnap = testing::kSnapshotBytes;

PrefixCacheConfig Config(bool hybrid, size_t budget) {
  PrefixCacheConfig config;
  config.hybrid = hybrid;
  config.block_tokens = kB;
  config.rung_tokens = 256;
  config.budget_bytes = budget;
  config.short_prompt_tokens = 64;
  return config;
}

uint64_t Evicted(const PrefixCache& cache, EvictReason reason) {
  return cache.Stats().evictions[static_cast<int>(reason)];
}

TEST(EvictionTest, DenseEvictsLeastRecentlyUsedConversationFirst) {
  PrefixCache cache(Config(false, 1 << 20));
  const auto a = Seq(64, 10000), b = Seq(64, 20000), c = Seq(64, 30000);
  RunRequest(cache, kLayout, a);
  RunRequest(cache, kLayout, b);
  RunRequest(cache, kLayout, c);
  cache.Lookup(a);  // a becomes most recent; b is now the oldest
  cache.SetBudget(8 * kBlock);
  cache.CheckInvariants();
  EXPECT_EQ(cache.Lookup(b).kind, HitKind::kMiss);
  EXPECT_EQ(cache.Lookup(a).reuse_tokens, 63);
  EXPECT_EQ(cache.Lookup(c).reuse_tokens, 63);
  EXPECT_EQ(Evicted(cache, EvictReason::kLru), 4u);
}

TEST(EvictionTest, EntriesShrinkFromTheTailAndSharedPrefixesLiveLongest) {
  PrefixCache cache(Config(false, 1 << 20));
  const auto system = Seq(128);  // 8 blocks shared by three conversations
  for (int i = 0; i < 3; ++i) RunRequest(cache, kLayout, Concat(system, Seq(64, 10000 * (i + 1))));
  EXPECT_EQ(cache.Stats().bytes_held, 20 * kBlock);
  cache.SetBudget(9 * kBlock);
  cache.CheckInvariants();
  // Conversation tails went first; the shared prefix (and one block more) stayed.
  EXPECT_EQ(cache.Lookup(Concat(system, Seq(64, 90000))).reuse_tokens, 128);
  cache.SetBudget(3 * kBlock);
  EXPECT_EQ(cache.Lookup(system).reuse_tokens, 48);  // never orphaned: a prefix survives
  cache.CheckInvariants();
}

TEST(EvictionTest, HybridDeadBlocksGoBeforeAnythingUseful) {
  PrefixCache cache(Config(true, 1 << 20));
  // Checkpoint at 40 only; blocks 3..6 (positions >= 48) can never be reused.
  cache.Insert(Seq(112), ColdTable(kLayout, Seq(112)),
               std::vector<Checkpoint>{{40, MakeSnapshot(40), CheckpointKind::kMessage}});
  RunRequest(cache, kLayout, Seq(100, 50000));  // a newer conversation
  const size_t held = cache.Stats().bytes_held;
  cache.SetBudget(held - 4 * kBlock);
  cache.CheckInvariants();
  EXPECT_EQ(Evicted(cache, EvictReason::kDeadBlocks), 4u);
  EXPECT_EQ(Evicted(cache, EvictReason::kLru), 0u);
  EXPECT_EQ(cache.Lookup(Seq(112)).reuse_tokens, 40);
  EXPECT_EQ(cache.Lookup(Seq(100, 50000)).reuse_tokens, 99);
}

TEST(EvictionTest, SupersededTurnCheckpointsGoBeforeConversations) {
  PrefixCache cache(Config(true, 1 << 20));
  // Session A, turn 1 then turn 2 (extends turn 1); session B, one turn.
  const auto a1 = Seq(100, 10000);
  RunRequest(cache, kLayout, a1);  // boundary 99
  const auto a2 = Concat(a1, Seq(60, 11000));
  const auto t2 = RunRequest(cache, kLayout, a2);  // hits 99, boundary 159
  ASSERT_EQ(t2.hit.reuse_tokens, 99);
  const auto b = Seq(100, 20000);
  RunRequest(cache, kLayout, b);
  cache.SetBudget(cache.Stats().bytes_held - kSnap);
  cache.CheckInvariants();
  EXPECT_EQ(Evicted(cache, EvictReason::kSuperseded), 1u);
  EXPECT_EQ(Evicted(cache, EvictReason::kLru), 0u);
  auto branch = a2;
  branch[120] = -1;
  EXPECT_EQ(cache.Lookup(branch).kind, HitKind::kMiss);  // turn-1 boundary is gone...
  EXPECT_EQ(cache.Lookup(Concat(a2, Seq(5, 1))).reuse_tokens, 159);  // ...the latest is kept
  EXPECT_EQ(cache.Lookup(Concat(b, Seq(5, 1))).reuse_tokens, 99);
}

TEST(EvictionTest, HitCheckpointsAreNotSuperseded) {
  PrefixCache cache(Config(true, 1 << 20));
  const auto a1 = Seq(100, 10000);
  RunRequest(cache, kLayout, a1);
  RunRequest(cache, kLayout, Concat(a1, Seq(60, 11000)));
  cache.Lookup(Concat(a1, Seq(60, 12000)));  // a branch hits the turn-1 boundary again
  cache.Shed(ShedLevel::kWarn);
  EXPECT_EQ(Evicted(cache, EvictReason::kShed), 0u);
  EXPECT_EQ(cache.Lookup(Concat(a1, Seq(60, 13000))).reuse_tokens, 99);
}

TEST(EvictionTest, ShortPromptDoesNotEvictLongConversations) {
  PrefixCache cache(Config(false, 1 << 20));
  const auto a = Seq(400, 10000), b = Seq(400, 20000);
  RunRequest(cache, kLayout, a);
  RunRequest(cache, kLayout, b);
  cache.SetBudget(cache.Stats().bytes_held);  // full
  const auto title = RunRequest(cache, kLayout, Seq(40, 30000));
  EXPECT_TRUE(title.inserted.refused_short_prompt);
  EXPECT_EQ(cache.Stats().short_prompt_refusals, 1u);
  EXPECT_EQ(cache.Lookup(a).reuse_tokens, 399);
  EXPECT_EQ(cache.Lookup(b).reuse_tokens, 399);
  cache.CheckInvariants();
}

TEST(EvictionTest, ShortPromptsStillCacheWhenRoomOrWhenResidentsAreShortToo) {
  PrefixCache cache(Config(false, 12 * kBlock));
  RunRequest(cache, kLayout, Seq(40, 1000));
  EXPECT_EQ(cache.Lookup(Seq(40, 1000)).reuse_tokens, 39);  // room: cached normally
  for (int i = 0; i < 10; ++i) RunRequest(cache, kLayout, Seq(40, 2000 * (i + 2)));
  EXPECT_EQ(cache.Lookup(Seq(40, 2000 * 11)).reuse_tokens, 39);  // short-only workload rotates
  EXPECT_EQ(cache.Stats().short_prompt_refusals, 0u);
  cache.CheckInvariants();
}

TEST(EvictionTest, ShortPromptSharingTheSystemPromptIsNotRefusedWhenItFits) {
  PrefixCache cache(Config(false, 1 << 20));
  const auto system = Seq(400, 10000);
  RunRequest(cache, kLayout, Concat(system, Seq(100, 1)));
  cache.SetBudget(cache.Stats().bytes_held + 4 * kBlock);
  const auto out = RunRequest(cache, kLayout, Seq(40, 777));
  EXPECT_FALSE(out.inserted.refused_short_prompt);
}

TEST(EvictionTest, InterleavedSessionsDoNotEvictEachOther) {
  // Two agent sessions alternate turns. The budget holds both sessions' KV and
  // current checkpoints but not every old turn's checkpoints.
  PrefixCache cache(Config(true, 80 * kBlock + 12 * kSnap));
  std::vector<Token> session[2] = {Seq(200, 100000), Seq(200, 200000)};
  for (int turn = 0; turn < 8; ++turn) {
    for (int s = 0; s < 2; ++s) {
      const int64_t previous = static_cast<int64_t>(session[s].size());
      if (turn > 0) {
        session[s] = Concat(session[s], Seq(60, 300000 + 1000 * turn + 500 * s));
      }
      const std::vector<MessageStart> messages = {{0, Role::kSystem}, {previous, Role::kUser}};
      const auto out = RunRequest(cache, kLayout, session[s], {.messages = messages});
      if (turn > 0) {
        EXPECT_EQ(out.hit.reuse_tokens, previous - 1) << "turn " << turn << " session " << s;
      }
      cache.CheckInvariants();
    }
  }
  EXPECT_EQ(Evicted(cache, EvictReason::kLru), 0u);
  EXPECT_GT(Evicted(cache, EvictReason::kSuperseded), 0u);
}

TEST(EvictionTest, LadderCapKeepsTheLadderSpreadOut) {
  PrefixCacheConfig config = Config(true, 1 << 20);
  config.max_checkpoints_per_path = 4;
  PrefixCache cache(config);
  std::vector<Checkpoint> cps;
  for (int64_t p : {100, 120, 140, 400, 420, 800, 1000}) cps.push_back({p, MakeSnapshot(p), CheckpointKind::kRung});
  cache.Insert(Seq(1024), ColdTable(kLayout, Seq(1024)), cps);
  std::vector<int64_t> kept;
  const auto entries = cache.List();
  for (const auto& c : entries[0].checkpoints) kept.push_back(c.position);
  EXPECT_EQ(kept, (std::vector<int64_t>{100, 400, 800, 1000}));
  EXPECT_EQ(Evicted(cache, EvictReason::kLadderCap), 3u);
  cache.CheckInvariants();
}

TEST(EvictionTest, LadderCapDropsOldTailsAndEndsFirstAndSparesMarks) {
  // A first turn's marks (where other sessions diverge) survive the turns
  // that follow; older turns' tails and ends go before any other checkpoint.
  PrefixCacheConfig config = Config(true, 1 << 20);
  config.max_checkpoints_per_path = 5;
  PrefixCache cache(config);
  const auto all = Seq(1024);
  std::vector<Checkpoint> cps;
  for (int64_t p : {100, 120, 140}) cps.push_back({p, MakeSnapshot(p), CheckpointKind::kMark});
  cps.push_back({400, MakeSnapshot(400), CheckpointKind::kBoundary});
  cps.push_back({500, MakeSnapshot(500), CheckpointKind::kTail});
  cps.push_back({520, MakeSnapshot(520), CheckpointKind::kEnd});
  cps.push_back({900, MakeSnapshot(900), CheckpointKind::kBoundary});
  cache.Insert(all, ColdTable(kLayout, all), cps);
  std::vector<int64_t> kept;
  const auto entries = cache.List();
  for (const auto& c : entries[0].checkpoints) kept.push_back(c.position);
  EXPECT_EQ(kept, (std::vector<int64_t>{100, 120, 140, 400, 900}));
  EXPECT_EQ(Evicted(cache, EvictReason::kLadderCap), 2u);
  cache.CheckInvariants();
}

TEST(EvictionTest, ShedWarnKeepsEntriesCriticalEmpties) {
  PrefixCache cache(Config(true, 1 << 20));
  const auto a1 = Seq(100, 10000);
  RunRequest(cache, kLayout, a1);
  RunRequest(cache, kLayout, Concat(a1, Seq(60, 11000)));
  cache.Insert(Seq(80, 50000), ColdTable(kLayout, Seq(80, 50000)),
               std::vector<Checkpoint>{{20, MakeSnapshot(20)}});  // 3 dead blocks
  cache.Shed(ShedLevel::kWarn);
  cache.CheckInvariants();
  EXPECT_EQ(Evicted(cache, EvictReason::kShed), 4u);  // 1 superseded + 3 dead
  EXPECT_EQ(cache.Lookup(Concat(a1, Seq(60, 11000))).reuse_tokens, 159);
  EXPECT_EQ(cache.Lookup(Seq(80, 50000)).reuse_tokens, 20);
  cache.Shed(ShedLevel::kCritical);
  EXPECT_EQ(cache.Stats().bytes_held, 0u);
  cache.Shed(ShedLevel::kWarn);  // no-op on an empty cache
  cache.CheckInvariants();
}

TEST(EvictionTest, EvictionNeverFreesWhatARunningRequestReads) {
  PrefixCache cache(Config(true, 1 << 20));
  RunRequest(cache, kLayout, Seq(300));
  const auto hit = cache.Lookup(Seq(300));
  ASSERT_GT(hit.reuse_tokens, 0);
  std::vector<uint64_t> sums;
  for (const auto& b : hit.blocks) sums.push_back(Checksum(*b));
  cache.SetBudget(0);
  EXPECT_EQ(cache.Stats().bytes_held, 0u);
  for (size_t i = 0; i < hit.blocks.size(); ++i) EXPECT_EQ(Checksum(*hit.blocks[i]), sums[i]);
  EXPECT_EQ(testing::SnapshotTag(*hit.snapshot), hit.reuse_tokens);
  cache.CheckInvariants();
}

TEST(EvictionTest, AnEntryLargerThanTheBudgetKeepsOnlyWhatFits) {
  PrefixCache cache(Config(false, 5 * kBlock));
  RunRequest(cache, kLayout, Seq(160));
  EXPECT_LE(cache.Stats().bytes_held, 5 * kBlock);
  EXPECT_EQ(cache.Lookup(Seq(160)).reuse_tokens, 80);
  cache.CheckInvariants();
}

}  // namespace
}  // namespace cairn::cache
