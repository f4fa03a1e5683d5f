// Model-free tests of the n-gram lookup drafter (mirrors mlx-dspark's
// test_lookup properties).
#include <gtest/gtest.h>

#include "sampling/rng.h"
#include "spec/lookup_drafter.h"

namespace cairn::spec {
namespace {

LookupDrafter Make(const std::vector<int32_t>& tokens, LookupOptions o = {}) {
  LookupDrafter d(o);
  for (int32_t t : tokens) d.Append(t);
  return d;
}

TEST(LookupDrafter, NoMatchGivesNoDraft) {
  EXPECT_TRUE(Make({1, 2, 3, 4, 5}).Query(4).empty());
}

TEST(LookupDrafter, ProposesTheContinuationOfTheLatestEarlierOccurrence) {
  //                 0  1  2  3  4  5  6  7  8  9 10 11
  const auto d = Make({1, 2, 3, 9, 9, 1, 2, 3, 7, 7, 1, 2, 3});
  // Suffix [1 2 3] occurred ending at 3 and 8; the latest earlier is 8 -> 7 7 1.
  EXPECT_EQ(d.Query(3), (std::vector<int32_t>{7, 7, 1}));
}

TEST(LookupDrafter, PrefersTheLongerNgram) {
  // [5 3] -> 8 (n = 2) is more specific than the later [3] -> 6 (n = 1).
  const auto d = Make({5, 3, 8, 8, 4, 3, 6, 6, 5, 3});
  EXPECT_EQ(d.Query(1), (std::vector<int32_t>{8}));
}

TEST(LookupDrafter, ClipsAtTheEndAndNeverPads) {
  const auto d = Make({4, 5, 4, 5});
  // [4 5] occurred ending at 2: continuation is T[2..4) = 4 5, clipped at the end.
  EXPECT_EQ(d.Query(8), (std::vector<int32_t>{4, 5}));
}

TEST(LookupDrafter, MinimumNgramIsRespected) {
  LookupOptions o;
  o.n_min = 3;
  EXPECT_TRUE(Make({1, 2, 7, 1, 2}, o).Query(4).empty());  // only a bigram repeats
  EXPECT_FALSE(Make({1, 2, 3, 7, 1, 2, 3}, o).Query(4).empty());
}

TEST(LookupDrafter, DeepMatchEarnsALongDraft) {
  std::vector<int32_t> t;
  for (int i = 0; i < 40; ++i) t.push_back(100 + i);
  std::vector<int32_t> seq = t;
  seq.insert(seq.end(), t.begin(), t.begin() + 12);  // repeat of the first 12: m = 12
  const auto d = Make(seq);
  const std::vector<int32_t> draft = d.Query(4);
  EXPECT_EQ(d.last_match_length(), 12);
  ASSERT_EQ(draft.size(), 24u);  // min(long_cap 32, 2m)
  EXPECT_EQ(draft[0], 112);
  // A weak match stays at the base length.
  const auto weak = Make({1, 2, 3, 4, 5, 6, 7, 8, 9, 3});
  EXPECT_EQ(weak.Query(4).size(), 4u);
}

TEST(LookupDrafter, IncrementalEqualsBulkAndTruncateRollsBackExactly) {
  sampling::Rng rng(3);
  std::vector<int32_t> seq;
  for (int i = 0; i < 400; ++i) seq.push_back(static_cast<int32_t>(rng.NextU64() % 12));
  LookupDrafter inc;
  for (size_t i = 0; i < seq.size(); ++i) {
    inc.Append(seq[i]);
    if (i % 37 == 0) {
      // Append junk, then roll it back: the index must be as before.
      const std::vector<int32_t> before = inc.Query(6);
      for (int32_t junk : {3, 3, 5, 11, 3}) inc.Append(junk);
      inc.Truncate(i + 1);
      EXPECT_EQ(inc.Query(6), before) << i;
    }
    const LookupDrafter bulk = Make(std::vector<int32_t>(seq.begin(), seq.begin() + i + 1));
    ASSERT_EQ(inc.Query(6), bulk.Query(6)) << "after " << i + 1 << " tokens";
  }
}

TEST(LookupDrafter, LongDraftGateParksAfterTwoChoppedLongDrafts) {
  std::vector<int32_t> t;
  for (int i = 0; i < 30; ++i) t.push_back(100 + i);
  std::vector<int32_t> seq = t;
  seq.insert(seq.end(), t.begin(), t.begin() + 10);
  LookupDrafter d;
  d.Begin(std::vector<int32_t>(seq.begin(), seq.end() - 1), {}, seq.back());
  std::vector<sampling::DraftToken> drafts;
  for (int round = 0; round < 2; ++round) {
    d.Propose(4, &drafts);
    ASSERT_GT(drafts.size(), 4u) << "round " << round;
    // Accept none; the target's own token continues the copy.
    const int32_t pending = d.tokens().back();
    d.Accept(std::vector<int32_t>{pending}, {}, drafts[0].token);
  }
  d.Propose(4, &drafts);
  EXPECT_EQ(drafts.size(), 4u) << "parked: base length only";
}

}  // namespace
}  // namespace cairn::spec
