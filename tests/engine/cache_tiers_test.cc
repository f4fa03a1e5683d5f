// CacheTiers: the memory guard's grades acting on the RAM tier (shed, spill,
// drop, recover), a dropped RAM tier restored from disk, and the guard thread
// driven by an injected pressure source.
#include "engine/cache_tiers.h"

#include <gtest/gtest.h>

#include "common/temp_dir.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "cache/fake_state.h"

namespace cairn::engine {
namespace {

using namespace cairn::cache;
using namespace cairn::cache::testing;
namespace fs = std::filesystem;
constexpr int kB = 8;

// Fresh directory per test (cairn_tiers_XXXXXX under /tmp).
using TempDir = test::TempDir;

class ScriptedSource : public PressureSource {
 public:
  explicit ScriptedSource(std::atomic<double>* available) : available_(available) {}
  MemoryReading Read() override {
    MemoryReading r;
    r.mem_total_bytes = 1000;
    r.mem_available_bytes = static_cast<int64_t>(available_->load() * 1000);
    return r;
  }

 private:
  std::atomic<double>* available_;
};

CacheTiersOptions Options(const std::string& disk_dir) {
  CacheTiersOptions o;
  o.ram.hybrid = true;
  o.ram.block_tokens = kB;
  o.ram.budget_bytes = 1 << 20;
  o.ram.rung_tokens = 16;
  o.ram.min_reuse = 4;
  if (!disk_dir.empty()) {
    o.disk = true;
    o.disk_options.dir = disk_dir;
    o.disk_options.budget_bytes = 16 << 20;
    o.identity.model_id = "fake";
    o.identity.layout = "fake";
    o.identity.target = "fake";
    o.geometry.kv = TinyLayout(kB);
    o.geometry.checkpointed = true;
    o.geometry.snapshot_bytes = kSnapshotBytes;
  }
  return o;
}

// One conversation: turn 1 (48 tokens: rung 16, boundary 40), then turn 2
// extending it (64 tokens: boundary 56), as the engine would insert them.
void InsertConversation(CacheTiers& tiers, Token base) {
  const KvLayout layout = TinyLayout(kB);
  const std::vector<Token> turn1 = Seq(48, base);
  tiers.Insert(turn1, ColdTable(layout, turn1),
               {{16, SnapshotOf(turn1, 16), CheckpointKind::kRung}, {40, SnapshotOf(turn1, 40), CheckpointKind::kBoundary}});
  const std::vector<Token> turn2 = Seq(64, base);
  tiers.Insert(turn2, ColdTable(layout, turn2), {{56, SnapshotOf(turn2, 56), CheckpointKind::kBoundary}});
}

TEST(CacheTiers, PressureGradesShedSpillDropAndRecover) {
  CacheTiers tiers(Options(""));
  InsertConversation(tiers, 1000);
  InsertConversation(tiers, 5000);
  const CacheStats before = tiers.ram().Stats();
  ASSERT_EQ(before.checkpoints_held, 6);
  ASSERT_EQ(before.entries, 2);

  tiers.ApplyPressure(PressureGrade::kShed);
  CacheStats s = tiers.ram().Stats();
  EXPECT_EQ(s.entries, 2);                // every conversation kept...
  EXPECT_EQ(s.checkpoints_held, 2);       // ...with only its newest checkpoint: superseded boundary and shallow rung gone
  EXPECT_LT(s.bytes_held, before.bytes_held);
  EXPECT_EQ(tiers.pressure(), PressureGrade::kShed);

  const size_t shed_bytes = s.bytes_held;
  tiers.ApplyPressure(PressureGrade::kSpill);
  s = tiers.ram().Stats();
  EXPECT_LE(s.bytes_held, shed_bytes / 2);
  EXPECT_LE(s.budget_bytes, shed_bytes / 2);

  tiers.ApplyPressure(PressureGrade::kDrop);
  s = tiers.ram().Stats();
  EXPECT_EQ(s.bytes_held, 0u);
  EXPECT_EQ(s.entries, 0);

  tiers.ApplyPressure(PressureGrade::kNormal);
  EXPECT_EQ(tiers.ram().Stats().budget_bytes, size_t{1} << 20);
  const std::string metrics = tiers.MetricsText();
  EXPECT_NE(metrics.find("cairn_memory_pressure_grade 0"), std::string::npos);
  EXPECT_NE(metrics.find("cairn_memory_pressure_entries_total{grade=\"drop\"} 1"), std::string::npos) << metrics;
  EXPECT_EQ(tiers.Listing()["memory"]["grade"], "normal");
}

TEST(CacheTiers, WhatPressureDropsFromRamIsServedFromDisk) {
  TempDir dir;
  CacheTiers tiers(Options(dir.path()));
  InsertConversation(tiers, 1000);
  tiers.disk()->Flush();
  tiers.ApplyPressure(PressureGrade::kDrop);
  ASSERT_EQ(tiers.ram().Stats().entries, 0);
  tiers.ApplyPressure(PressureGrade::kNormal);
  // Turn 3: the conversation so far plus a new message.
  const std::vector<Token> turn3 = Concat(Seq(64, 1000), Seq(10, 90000));
  const TieredHit hit = tiers.Lookup(LookupRequest{turn3, {}, {}});
  EXPECT_EQ(hit.result.reuse_tokens, 56);
  EXPECT_EQ(hit.disk_tokens, 56);
  EXPECT_EQ(hit.result.kind, HitKind::kBoundary);
  EXPECT_TRUE(RestoreIsExact(hit.result, turn3, kB));
  // Adopted by RAM: the same lookup now hits there.
  const TieredHit again = tiers.Lookup(LookupRequest{turn3, {}, {}});
  EXPECT_EQ(again.result.reuse_tokens, 56);
  EXPECT_EQ(again.disk_tokens, 0);
  EXPECT_TRUE(RestoreIsExact(again.result, turn3, kB));
}

TEST(CacheTiers, GuardThreadFollowsAnInjectedSource) {
  std::atomic<double> available{0.9};
  CacheTiersOptions o = Options("");
  o.memory_guard = true;
  o.guard_interval = std::chrono::milliseconds(2);
  o.pressure_source = std::make_unique<ScriptedSource>(&available);
  CacheTiers tiers(std::move(o));
  InsertConversation(tiers, 1000);
  auto wait_for = [&](PressureGrade grade) {
    for (int i = 0; i < 2000 && tiers.pressure() != grade; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return tiers.pressure() == grade;
  };
  available = 0.02;   // below the drop threshold (4%)
  ASSERT_TRUE(wait_for(PressureGrade::kDrop));
  EXPECT_EQ(tiers.ram().Stats().entries, 0);
  EXPECT_NE(tiers.MetricsText().find("cairn_memory_pressure_grade 3"), std::string::npos);
  const Json listing = tiers.Listing();
  EXPECT_EQ(listing["memory"]["grade"], "drop");
  EXPECT_NEAR(listing["memory"]["available_fraction"].get<double>(), 0.02, 1e-9);
  available = 0.9;    // recovery steps down one grade per poll
  ASSERT_TRUE(wait_for(PressureGrade::kNormal));
  EXPECT_EQ(tiers.ram().Stats().budget_bytes, size_t{1} << 20);
  InsertConversation(tiers, 3000);
  EXPECT_EQ(tiers.ram().Stats().entries, 1);
}

}  // namespace
}  // namespace cairn::engine
