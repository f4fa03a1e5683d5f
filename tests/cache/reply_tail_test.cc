// Reply tails (CheckpointKind::kTail): a checkpoint whose replay log makes
// every position of a reply's last tokens restorable (cache/prefix_cache.cc,
// model/reply_tail.h). Fake states: the log is opaque bytes, the tokens it
// consumes are real.
#include <gtest/gtest.h>

#include "fake_state.h"

namespace cairn::cache {
namespace {

using testing::ColdTable;
using testing::Concat;
using testing::Seq;
using testing::SnapshotOf;
using testing::TailOf;
using testing::TinyLayout;

constexpr int kB = 16;

PrefixCacheConfig Hybrid() { return testing::HybridConfig(kB, /*rung_tokens=*/0, size_t{64} << 20); }

// One turn: a prompt of `prompt_len` tokens with a boundary checkpoint 3
// before its end, then a reply of `reply` tokens fed back (the last emitted
// token is not fed), an end checkpoint, and a tail over the reply's last
// `tail` fed positions.
struct Turn {
  std::vector<Token> all;
  int64_t prompt_len = 0;
};

Turn InsertTurn(PrefixCache& cache, const KvLayout& layout, int64_t prompt_len, int64_t reply, int64_t tail,
                Token reply_base = 50000) {
  Turn t;
  t.prompt_len = prompt_len;
  t.all = Concat(Seq(prompt_len), Seq(reply, reply_base));
  const int64_t n = static_cast<int64_t>(t.all.size());
  std::vector<Checkpoint> cps = {{prompt_len - 3, SnapshotOf(t.all, prompt_len - 3), CheckpointKind::kBoundary},
                                 {n, SnapshotOf(t.all, n), CheckpointKind::kEnd},
                                 {n - tail, TailOf(t.all, n - tail, tail), CheckpointKind::kTail}};
  cache.Insert(t.all, ColdTable(layout, t.all), cps);
  return t;
}

class ReplyTailTest : public ::testing::Test {
 protected:
  PrefixCache cache_{Hybrid()};
  KvLayout layout_ = TinyLayout(kB);
};

TEST_F(ReplyTailTest, NextPromptDivergingInsideTheReplyResumesAtTheDivergence) {
  const Turn t = InsertTurn(cache_, layout_, 200, 40, 20);
  const int64_t n = static_cast<int64_t>(t.all.size());  // 240
  // The re-rendered reply differs 2 tokens before its end; a new user turn follows.
  for (const int64_t diverge : {n - 2, n - 7, n - 20, n - 1}) {
    auto next = std::vector<Token>(t.all.begin(), t.all.begin() + diverge);
    next = Concat(next, Seq(30, 70000));
    const LookupResult r = cache_.Lookup(next);
    EXPECT_EQ(r.kind, HitKind::kTail) << diverge;
    EXPECT_EQ(r.reuse_tokens, diverge);
    EXPECT_EQ(r.replay_tokens, diverge - (n - 20));
    EXPECT_TRUE(testing::RestoreIsExact(r, next, kB)) << diverge;
  }
  cache_.CheckInvariants();
}

TEST_F(ReplyTailTest, DivergenceBeforeTheTailFallsBackToTheBoundary) {
  const Turn t = InsertTurn(cache_, layout_, 200, 40, 20);
  auto next = std::vector<Token>(t.all.begin(), t.all.begin() + 210);  // 10 tokens into the reply
  next = Concat(next, Seq(30, 70000));
  const LookupResult r = cache_.Lookup(next);
  EXPECT_EQ(r.kind, HitKind::kBoundary);
  EXPECT_EQ(r.reuse_tokens, 197);
  EXPECT_EQ(r.replay_tokens, 0);
  EXPECT_TRUE(testing::RestoreIsExact(r, next, kB));
}

TEST_F(ReplyTailTest, TheWholeReplyMatchingPrefersTheEndCheckpoint) {
  const Turn t = InsertTurn(cache_, layout_, 200, 40, 20);
  const auto next = Concat(t.all, Seq(30, 70000));
  const LookupResult r = cache_.Lookup(next);
  EXPECT_EQ(r.kind, HitKind::kEnd);
  EXPECT_EQ(r.reuse_tokens, static_cast<int64_t>(t.all.size()));
  EXPECT_EQ(r.replay_tokens, 0);
  EXPECT_TRUE(testing::RestoreIsExact(r, next, kB));
}

TEST_F(ReplyTailTest, AnotherBranchsTokensNeverReplay) {
  // Two replies to the same prompt; the tail of the first must not serve a
  // prompt that follows the second, even where the trie shares their blocks.
  const Turn a = InsertTurn(cache_, layout_, 200, 40, 30, 50000);
  auto b_all = a.all;
  for (int64_t i = 225; i < 240; ++i) b_all[static_cast<size_t>(i)] = static_cast<Token>(90000 + i);
  cache_.Insert(b_all, ColdTable(layout_, b_all));  // no checkpoints of its own
  auto next = std::vector<Token>(b_all.begin(), b_all.begin() + 236);
  next = Concat(next, Seq(10, 70000));
  const LookupResult r = cache_.Lookup(next);
  // a's tail (base 210) matches b up to 225 only.
  EXPECT_EQ(r.kind, HitKind::kTail);
  EXPECT_EQ(r.reuse_tokens, 225);
  EXPECT_TRUE(testing::RestoreIsExact(r, next, kB));
  cache_.CheckInvariants();
}

TEST_F(ReplyTailTest, ReachStopsOneTokenBeforeThePromptEnd) {
  // A prompt ending inside the tail: reuse stops one token before its end
  // (that token is recomputed so logits exist).
  const Turn t = InsertTurn(cache_, layout_, 200, 40, 20);
  const auto next = std::vector<Token>(t.all.begin(), t.all.begin() + 230);  // ends inside the tail
  const LookupResult r = cache_.Lookup(next);
  EXPECT_EQ(r.reuse_tokens, 229);
  EXPECT_EQ(r.kind, HitKind::kTail);
  EXPECT_TRUE(testing::RestoreIsExact(r, next, kB));
}

TEST_F(ReplyTailTest, ATailUpgradesAPlainCheckpointAtItsBase) {
  const auto all = Concat(Seq(200), Seq(40, 50000));
  cache_.Insert(all, ColdTable(layout_, all), std::vector<Checkpoint>{{220, SnapshotOf(all, 220), CheckpointKind::kRung}});
  cache_.Insert(all, ColdTable(layout_, all), std::vector<Checkpoint>{{220, TailOf(all, 220, 20), CheckpointKind::kTail}});
  auto next = std::vector<Token>(all.begin(), all.begin() + 235);
  next = Concat(next, Seq(5, 70000));
  const LookupResult r = cache_.Lookup(next);
  EXPECT_EQ(r.reuse_tokens, 235);
  EXPECT_EQ(r.replay_tokens, 15);
  EXPECT_TRUE(testing::RestoreIsExact(r, next, kB));
  // Bytes count the log too, exactly once.
  const CacheStats s = cache_.Stats();
  EXPECT_EQ(s.checkpoint_bytes, testing::kSnapshotBytes + 20 * testing::kTailBytesPerToken + 20 * sizeof(int32_t));
  cache_.CheckInvariants();
}

}  // namespace
}  // namespace cairn::cache
