// Checkpoint mode (hybrid models): reuse only at recurrent checkpoints.
#include <gtest/gtest.h>

#include "fake_state.h"

namespace cairn::cache {
namespace {

using testing::ColdTable;
using testing::Concat;
using testing::MakeSnapshot;
using testing::RunRequest;
using testing::Seq;
using testing::SnapshotOf;
using testing::SnapshotTag;
using testing::TinyLayout;

constexpr int kB = 16;

PrefixCacheConfig Hybrid() { return testing::HybridConfig(kB, /*rung_tokens=*/256, size_t{64} << 20); }

class HybridCacheTest : public ::testing::Test {
 protected:
  // Checks the restore plan is self-consistent and returns the right state.
  void ExpectRestorable(const LookupResult& r, std::span<const Token> prompt) {
    EXPECT_TRUE(testing::RestoreIsExact(r, prompt, kB));
    if (r.kind == HitKind::kMiss) {
      EXPECT_EQ(r.reuse_tokens, 0);
      EXPECT_EQ(r.snapshot, nullptr);
      return;
    }
    ASSERT_NE(r.snapshot, nullptr);
    EXPECT_EQ(r.snapshot->position(), r.reuse_tokens);
    EXPECT_EQ(SnapshotTag(*r.snapshot), r.reuse_tokens);
    EXPECT_EQ(static_cast<int64_t>(r.blocks.size()), (r.reuse_tokens + kB - 1) / kB);
    EXPECT_LE(r.reuse_tokens, r.lcp);
  }

  PrefixCache cache_{Hybrid()};
  KvLayout layout_ = TinyLayout(kB);
};

TEST_F(HybridCacheTest, IdenticalRetryHitsTheStableBoundary) {
  const auto prompt = Seq(300);
  const auto first = RunRequest(cache_, layout_, prompt, {.unstable_tail = 3});
  EXPECT_EQ(first.hit.kind, HitKind::kMiss);
  // Rung at 256 and boundary at 297 were planned.
  ASSERT_EQ(first.planned.size(), 2u);
  const auto r = cache_.Lookup(prompt);
  EXPECT_EQ(r.kind, HitKind::kBoundary);
  EXPECT_EQ(r.reuse_tokens, 297);
  ExpectRestorable(r, prompt);
  cache_.CheckInvariants();
}

TEST_F(HybridCacheTest, NoCheckpointNoReuseEvenWithLongCommonPrefix) {
  const auto prompt = Seq(200);
  cache_.Insert(prompt, ColdTable(layout_, prompt));  // no checkpoints
  const auto r = cache_.Lookup(prompt);
  EXPECT_EQ(r.kind, HitKind::kMiss);
  EXPECT_EQ(r.lcp, 200);
  EXPECT_NE(r.reason.find("no recurrent checkpoint"), std::string::npos) << r.reason;
}

TEST_F(HybridCacheTest, DeepestUsableCheckpointAtOrBelowTheCommonPrefix) {
  const auto prompt = Seq(200);
  std::vector<Checkpoint> cps;
  for (int64_t p : {20, 50, 64, 100, 150, 199}) cps.push_back({p, SnapshotOf(prompt, p), CheckpointKind::kMessage});
  cache_.Insert(prompt, ColdTable(layout_, prompt), cps);
  for (auto [diverge, expected] : std::vector<std::pair<int64_t, int64_t>>{
           {120, 100}, {100, 100}, {99, 64}, {64, 64}, {63, 50}, {25, 20}, {19, 0}, {200, 199}}) {
    auto p = prompt;
    if (diverge < 200) p[diverge] = -5;
    const auto r = cache_.Lookup(p);
    EXPECT_EQ(r.reuse_tokens, expected) << "diverge at " << diverge;
    EXPECT_EQ(r.lcp, diverge);
    ExpectRestorable(r, p);
  }
  // A shorter prompt ending exactly at a checkpoint cannot use it (nothing to forward).
  const std::vector<Token> prefix(prompt.begin(), prompt.begin() + 150);
  EXPECT_EQ(cache_.Lookup(prefix).reuse_tokens, 100);
}

TEST_F(HybridCacheTest, CheckpointOnADivergingSiblingBlockIsFound) {
  // Entry A has a checkpoint at 40 inside block 2; entry B diverges from A at
  // 45 (same block). A prompt matching both up to 44 hits A's checkpoint.
  const auto a = Seq(64);
  cache_.Insert(a, ColdTable(layout_, a), std::vector<Checkpoint>{{40, SnapshotOf(a, 40)}});
  auto b = a;
  b[45] = -1;
  cache_.Insert(b, ColdTable(layout_, b));
  auto c = a;
  c[44] = -2;
  const auto r = cache_.Lookup(c);
  EXPECT_EQ(r.reuse_tokens, 40);
  ExpectRestorable(r, c);
  EXPECT_EQ(r.blocks.back(), cache_.Lookup(a).blocks[2]);
  cache_.CheckInvariants();
}

TEST_F(HybridCacheTest, NextTurnAfterTemplateRerenderHitsBoundary) {
  // Turn 1: prompt ends with a 3-token generation tail the next render drops.
  const auto history = Seq(400);
  const auto tail = Seq(3, 90000);
  RunRequest(cache_, layout_, Concat(history, tail), {.unstable_tail = 3, .generated = Seq(20, 50000)});
  // Turn 2 re-renders the reply differently after `history`.
  const auto turn2 = Concat(Concat(history, Seq(25, 60000)), Seq(40, 70000));
  const auto r = cache_.Lookup(turn2);
  EXPECT_EQ(r.kind, HitKind::kBoundary);
  EXPECT_EQ(r.reuse_tokens, 400);
  ExpectRestorable(r, turn2);
}

TEST_F(HybridCacheTest, MessageCheckpointServesAStrippedReasoningTurn) {
  // Messages: system [0,300), user [300,350), assistant [350,500) with reasoning.
  const auto prompt1 = Concat(Seq(350), Seq(150, 80000));
  const std::vector<MessageStart> messages = {{0, Role::kSystem}, {300, Role::kUser}, {350, Role::kAssistant}};
  RunRequest(cache_, layout_, prompt1, {.messages = messages});
  // Next request: the template drops the assistant's reasoning, so the prompt
  // diverges right at the assistant message start.
  const auto prompt2 = Concat(Seq(350), Seq(100, 81000));
  const auto r = cache_.Lookup(prompt2);
  EXPECT_EQ(r.kind, HitKind::kMessage);
  EXPECT_EQ(r.reuse_tokens, 350);
  ExpectRestorable(r, prompt2);
}

TEST_F(HybridCacheTest, AnchorPlantedOnLongSharedMissThenNextRequestOfThatShapeHits) {
  // Conversation 1: a 500-token system prompt + user A; checkpoints only at
  // rungs/boundary (no message positions given).
  const auto system = Seq(500);
  RunRequest(cache_, layout_, Concat(system, Seq(60, 10000)));
  // Conversation 2: same system prompt, new user: shares 500 tokens, deepest
  // checkpoint is the rung at 256 -> partial hit, anchor planned at 500.
  const auto second = RunRequest(cache_, layout_, Concat(system, Seq(80, 20000)));
  EXPECT_EQ(second.hit.kind, HitKind::kRung);
  EXPECT_EQ(second.hit.reuse_tokens, 256);
  EXPECT_EQ(second.hit.lcp, 500);
  bool anchored = false;
  for (const auto& p : second.planned) anchored |= p.kind == CheckpointKind::kAnchor && p.position == 500;
  EXPECT_TRUE(anchored);
  // Conversation 3 of the same shape hits the anchor exactly.
  const auto third_prompt = Concat(system, Seq(70, 30000));
  const auto third = cache_.Lookup(third_prompt);
  EXPECT_EQ(third.kind, HitKind::kAnchor);
  EXPECT_EQ(third.reuse_tokens, 500);
  ExpectRestorable(third, third_prompt);
  cache_.CheckInvariants();
}

TEST_F(HybridCacheTest, RungsAreInheritedAlongTheSharedPath) {
  const auto system = Seq(600);
  const auto first = RunRequest(cache_, layout_, Concat(system, Seq(100, 10000)));
  // Rungs at 256 and 512 were saved by the first conversation.
  ASSERT_GE(first.planned.size(), 3u);
  const auto second = RunRequest(cache_, layout_, Concat(system, Seq(300, 20000)));
  EXPECT_EQ(second.hit.reuse_tokens, 512);
  for (const auto& p : second.planned) EXPECT_GT(p.position, 512);  // no rung re-saved
  // The shared path keeps one snapshot per rung position.
  int rungs = 0;
  for (const auto& e : cache_.List()) {
    for (const auto& c : e.checkpoints) rungs += c.kind == CheckpointKind::kRung && c.position <= 512;
  }
  EXPECT_EQ(rungs, 4);  // 256 and 512, listed once per entry (stored once)
  // A third prompt diverging past 512 inside conversation 2 reuses the shared rung.
  auto probe = Concat(system, Seq(300, 20000));
  probe[530] = -1;
  EXPECT_EQ(cache_.Lookup(probe).reuse_tokens, 512);
  cache_.CheckInvariants();
}

TEST_F(HybridCacheTest, EndCheckpointServesTheNextTurn) {
  const auto prompt = Seq(100);
  RunRequest(cache_, layout_, prompt, {.generated = Seq(40, 3000), .end_checkpoint = true});
  const auto next = Concat(Concat(prompt, Seq(40, 3000)), Seq(10, 4000));
  const auto r = cache_.Lookup(next);
  EXPECT_EQ(r.kind, HitKind::kEnd);
  EXPECT_EQ(r.reuse_tokens, 140);
  ExpectRestorable(r, next);
}

TEST_F(HybridCacheTest, CancelledRequestInsertsItsVerifiedPrefixOnly) {
  // Prefill was cut short at 300 of 1000 tokens: rung at 256 was taken.
  const auto prompt = Seq(1000);
  const auto done = std::vector<Token>(prompt.begin(), prompt.begin() + 300);
  cache_.Insert(done, ColdTable(layout_, done),
                std::vector<Checkpoint>{{256, SnapshotOf(done, 256), CheckpointKind::kRung}});
  const auto r = cache_.Lookup(prompt);
  EXPECT_EQ(r.reuse_tokens, 256);
  ExpectRestorable(r, prompt);
  // A checkpoint beyond what was inserted is rejected (never garbage).
  EXPECT_THROW(cache_.Insert(done, ColdTable(layout_, done),
                             std::vector<Checkpoint>{{301, MakeSnapshot(301)}}),
               Error);
  EXPECT_THROW(cache_.Insert(done, ColdTable(layout_, done),
                             std::vector<Checkpoint>{{200, MakeSnapshot(201)}}),
               Error);
  cache_.CheckInvariants();
}

TEST_F(HybridCacheTest, FailedRequestLeavesCachedEntriesUsable) {
  const auto prompt = Seq(300);
  RunRequest(cache_, layout_, prompt);
  const auto hit = cache_.Lookup(prompt);
  // The engine copy-on-writes and scribbles on its copy, then fails (no insert).
  KvBlockTable table = hit.blocks;
  table.back() = table.back()->CloneUnfrozen();
  table.back()->Slab(0, 0)[0] ^= 0xff;
  const auto again = cache_.Lookup(prompt);
  EXPECT_EQ(again.reuse_tokens, hit.reuse_tokens);
  EXPECT_EQ(again.blocks.back(), hit.blocks.back());
  EXPECT_EQ(again.snapshot, hit.snapshot);
}

TEST_F(HybridCacheTest, ExistingCheckpointIsKeptOnReinsert) {
  const auto prompt = Seq(100);
  const auto snap = MakeSnapshot(50);
  cache_.Insert(prompt, ColdTable(layout_, prompt), std::vector<Checkpoint>{{50, snap}});
  const size_t bytes = cache_.Stats().bytes_held;
  const auto res = cache_.Insert(prompt, ColdTable(layout_, prompt),
                                 std::vector<Checkpoint>{{50, MakeSnapshot(50), CheckpointKind::kAnchor}});
  EXPECT_EQ(res.new_checkpoints, 0);
  EXPECT_EQ(res.new_blocks, 0);
  EXPECT_EQ(cache_.Stats().bytes_held, bytes);
  const auto r = cache_.Lookup(prompt);
  EXPECT_EQ(r.snapshot, snap);
  EXPECT_EQ(r.kind, HitKind::kAnchor);  // the more protective kind is kept
}

TEST_F(HybridCacheTest, ListShowsEntriesWithCheckpoints) {
  RunRequest(cache_, layout_, Seq(300));
  const auto entries = cache_.List();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].tokens, 300);
  ASSERT_EQ(entries[0].checkpoints.size(), 2u);
  EXPECT_EQ(entries[0].checkpoints[0].kind, CheckpointKind::kRung);
  EXPECT_EQ(entries[0].checkpoints[1].position, 299);
  EXPECT_EQ(entries[0].bytes, cache_.Stats().bytes_held);
  EXPECT_EQ(entries[0].exclusive_bytes, entries[0].bytes);
}

}  // namespace
}  // namespace cairn::cache
