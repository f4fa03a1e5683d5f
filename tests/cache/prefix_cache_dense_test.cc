// Trim mode (dense models): longest common prefix minus one, min_reuse,
// sessions, block sharing, immutability, diagnostics.
#include <gtest/gtest.h>

#include "fake_state.h"

namespace cairn::cache {
namespace {

using testing::ColdTable;
using testing::Checksum;
using testing::Concat;
using testing::RunRequest;
using testing::Seq;
using testing::TinyLayout;

constexpr int kB = 16;

PrefixCacheConfig Dense() {
  PrefixCacheConfig config;
  config.block_tokens = kB;
  config.budget_bytes = size_t{64} << 20;
  return config;
}

class DenseCacheTest : public ::testing::Test {
 protected:
  PrefixCache cache_{Dense()};
  KvLayout layout_ = TinyLayout(kB);
};

TEST_F(DenseCacheTest, EmptyCacheMisses) {
  const auto r = cache_.Lookup(Seq(100));
  EXPECT_EQ(r.kind, HitKind::kMiss);
  EXPECT_EQ(r.reuse_tokens, 0);
  EXPECT_TRUE(r.blocks.empty());
  EXPECT_NE(r.reason.find("empty"), std::string::npos) << r.reason;
}

TEST_F(DenseCacheTest, IdenticalRetryReusesAllButTheLastToken) {
  const auto prompt = Seq(100);
  RunRequest(cache_, layout_, prompt);
  const auto r = cache_.Lookup(prompt);
  EXPECT_EQ(r.kind, HitKind::kTrim);
  EXPECT_EQ(r.reuse_tokens, 99);
  EXPECT_EQ(r.lcp, 100);
  EXPECT_EQ(r.blocks.size(), 7u);  // ceil(99 / 16)
  EXPECT_TRUE(r.reason.empty()) << r.reason;
  for (const auto& b : r.blocks) EXPECT_TRUE(b->frozen());
  cache_.CheckInvariants();
}

TEST_F(DenseCacheTest, NextTurnReusesThePreviousRecordInclGenerated) {
  const auto prompt = Seq(100);
  const auto reply = Seq(20, 5000);
  RunRequest(cache_, layout_, prompt, {.generated = reply});
  const auto next = Concat(Concat(prompt, reply), Seq(30, 9000));
  const auto r = cache_.Lookup(next);
  EXPECT_EQ(r.kind, HitKind::kTrim);
  EXPECT_EQ(r.reuse_tokens, 120);
  EXPECT_NE(r.reason.find("cached path ends at token 120"), std::string::npos) << r.reason;
}

TEST_F(DenseCacheTest, DivergenceInsideABlockReusesTheCommonPrefix) {
  const auto a = Seq(100);
  RunRequest(cache_, layout_, a);
  auto b = a;
  b[37] = 1;  // diverges inside block 2
  const std::vector<MessageStart> messages = {{0, Role::kSystem}, {30, Role::kUser}, {60, Role::kAssistant}};
  const auto r = cache_.Lookup(LookupRequest{b, messages, [](std::span<const Token> t) {
                                               return "tok" + std::to_string(t[0]);
                                             }});
  EXPECT_EQ(r.reuse_tokens, 37);
  EXPECT_EQ(r.lcp, 37);
  ASSERT_EQ(r.blocks.size(), 3u);  // the third is partially valid: the engine copies it
  EXPECT_EQ(r.divergence.position, 37);
  EXPECT_EQ(r.divergence.message_index, 1);
  EXPECT_EQ(r.divergence.role, Role::kUser);
  EXPECT_EQ(r.divergence.prompt_text, "tok1");
  EXPECT_EQ(r.divergence.cached_text, "tok1037");
  EXPECT_NE(r.reason.find("token 37 (message 1, user)"), std::string::npos) << r.reason;
}

TEST_F(DenseCacheTest, SharedPrefixBelowMinReuseStartsCold) {
  RunRequest(cache_, layout_, Seq(100));
  auto b = Seq(100);
  b[15] = 1;
  const auto r = cache_.Lookup(b);
  EXPECT_EQ(r.kind, HitKind::kMiss);
  EXPECT_EQ(r.lcp, 15);
  EXPECT_NE(r.reason.find("below min_reuse"), std::string::npos) << r.reason;
  b = Seq(100);
  b[16] = 1;
  EXPECT_EQ(cache_.Lookup(b).reuse_tokens, 16);
}

TEST_F(DenseCacheTest, ShortIdenticalPromptBelowMinReuseMisses) {
  RunRequest(cache_, layout_, Seq(16));
  EXPECT_EQ(cache_.Lookup(Seq(16)).kind, HitKind::kMiss);  // 15 reusable < 16
  RunRequest(cache_, layout_, Seq(17));
  EXPECT_EQ(cache_.Lookup(Seq(17)).reuse_tokens, 16);
}

TEST_F(DenseCacheTest, TwoConversationsEachHitTheirOwnPath) {
  const auto system = Seq(64);
  const auto a = Concat(system, Seq(50, 20000));
  const auto b = Concat(system, Seq(70, 30000));
  RunRequest(cache_, layout_, a);
  RunRequest(cache_, layout_, b);
  EXPECT_EQ(cache_.Lookup(Concat(a, Seq(10, 40000))).reuse_tokens, 114);
  EXPECT_EQ(cache_.Lookup(Concat(b, Seq(10, 40000))).reuse_tokens, 134);
  const auto entries = cache_.List();
  ASSERT_EQ(entries.size(), 2u);
  for (const auto& e : entries) EXPECT_EQ(e.shared_tokens, 64);
  cache_.CheckInvariants();
}

TEST_F(DenseCacheTest, SharedBlocksAreStoredAndCountedOnce) {
  const auto system = Seq(64);  // 4 full blocks
  RunRequest(cache_, layout_, Concat(system, Seq(32, 20000)));
  const size_t block_bytes = layout_.BlockBytes();
  EXPECT_EQ(cache_.Stats().bytes_held, 6 * block_bytes);
  // The second conversation restores the system blocks and adds 2 of its own.
  const auto out = RunRequest(cache_, layout_, Concat(system, Seq(32, 30000)));
  EXPECT_EQ(out.inserted.new_blocks, 2);
  EXPECT_EQ(out.inserted.shared_blocks, 4);
  EXPECT_EQ(cache_.Stats().bytes_held, 8 * block_bytes);
  // A cold engine computing the same prefix into its own blocks: not duplicated.
  const auto third = Concat(system, Seq(32, 40000));
  const KvBlockTable cold = ColdTable(layout_, third);
  const auto res = cache_.Insert(third, cold);
  EXPECT_EQ(res.shared_blocks, 4);
  EXPECT_EQ(cache_.Stats().bytes_held, 10 * block_bytes);
  EXPECT_EQ(cache_.Lookup(third).blocks[0], cache_.Lookup(system).blocks[0]);
  cache_.CheckInvariants();
}

TEST_F(DenseCacheTest, PartialLastBlockGrowsInPlaceAndKeepsRunningReadersSafe) {
  const auto prompt = Seq(40);  // blocks: 16, 16, 8
  RunRequest(cache_, layout_, prompt);
  const auto first = cache_.Lookup(Concat(prompt, Seq(20, 7000)));
  ASSERT_EQ(first.reuse_tokens, 40);
  const KvBlockRef old_tail = first.blocks[2];
  const uint64_t sum = Checksum(*old_tail);
  RunRequest(cache_, layout_, Concat(prompt, Seq(20, 7000)));
  EXPECT_EQ(cache_.Stats().nodes, 4);  // 16, 16, 16 (grown), 12
  EXPECT_EQ(cache_.Stats().bytes_held, 4 * layout_.BlockBytes());
  EXPECT_EQ(Checksum(*old_tail), sum);  // the replaced block is intact for its reader
  EXPECT_EQ(cache_.Lookup(prompt).reuse_tokens, 39);
  cache_.CheckInvariants();
}

TEST_F(DenseCacheTest, ReturnedBlocksStayFrozenAndUnchangedAcrossInsertsAndEvictions) {
  PrefixCacheConfig config = Dense();
  config.budget_bytes = 40 * layout_.BlockBytes();
  PrefixCache cache(config);
  const auto prompt = Seq(100);
  RunRequest(cache, layout_, prompt);
  const auto hit = cache.Lookup(prompt);
  std::vector<uint64_t> sums;
  for (const auto& b : hit.blocks) sums.push_back(Checksum(*b));
  for (int i = 0; i < 30; ++i) {
    RunRequest(cache, layout_, Concat(Seq(10 + i, 100000 * (i + 1)), Seq(90, 77)));
    cache.CheckInvariants();
  }
  EXPECT_LT(cache.Lookup(prompt).reuse_tokens, 99);  // evicted meanwhile
  for (size_t i = 0; i < hit.blocks.size(); ++i) {
    EXPECT_TRUE(hit.blocks[i]->frozen());
    EXPECT_EQ(Checksum(*hit.blocks[i]), sums[i]);
  }
}

TEST_F(DenseCacheTest, DisabledCacheNeverHitsNorStores) {
  PrefixCacheConfig config = Dense();
  config.enabled = false;
  PrefixCache cache(config);
  RunRequest(cache, layout_, Seq(100));
  const auto r = cache.Lookup(Seq(100));
  EXPECT_EQ(r.kind, HitKind::kMiss);
  EXPECT_NE(r.reason.find("--no-prefix-cache"), std::string::npos);
  EXPECT_EQ(cache.Stats().bytes_held, 0u);
}

TEST_F(DenseCacheTest, StatsCountHitsReuseAndInserts) {
  RunRequest(cache_, layout_, Seq(100));
  cache_.Lookup(Seq(100));
  cache_.Lookup(Seq(100, 5));
  const CacheStats s = cache_.Stats();
  EXPECT_EQ(s.lookups, 3u);
  EXPECT_EQ(s.hits[static_cast<int>(HitKind::kTrim)], 1u);
  EXPECT_EQ(s.hits[static_cast<int>(HitKind::kMiss)], 2u);
  EXPECT_EQ(s.reused_tokens, 99u);
  EXPECT_EQ(s.inserts, 1u);
  EXPECT_EQ(s.inserted_blocks, 7u);
  EXPECT_EQ(s.entries, 1);
}

TEST_F(DenseCacheTest, ClearDropsEverything) {
  RunRequest(cache_, layout_, Seq(100));
  cache_.Clear();
  EXPECT_EQ(cache_.Lookup(Seq(100)).kind, HitKind::kMiss);
  EXPECT_EQ(cache_.Stats().bytes_held, 0u);
  cache_.CheckInvariants();
}

TEST_F(DenseCacheTest, MalformedInsertThrowsAndChangesNothing) {
  KvBlockTable too_few = ColdTable(layout_, Seq(32));
  EXPECT_THROW(cache_.Insert(Seq(40), too_few), Error);
  KvBlockTable with_null = ColdTable(layout_, Seq(40));
  with_null[1] = nullptr;
  EXPECT_THROW(cache_.Insert(Seq(40), with_null), Error);
  EXPECT_EQ(cache_.Stats().bytes_held, 0u);
  PrefixCacheConfig bad = Dense();
  bad.block_tokens = 0;
  EXPECT_THROW(PrefixCache{bad}, Error);
}

}  // namespace
}  // namespace cairn::cache
