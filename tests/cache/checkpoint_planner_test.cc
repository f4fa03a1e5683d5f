// Checkpoint placement: boundary, message starts, rungs, anchors, filters.
#include "cache/checkpoint_planner.h"

#include <gtest/gtest.h>

namespace cairn::cache {
namespace {

PrefixCacheConfig Hybrid() {
  PrefixCacheConfig config;
  config.hybrid = true;
  config.rung_tokens = 4096;
  return config;
}

std::vector<int64_t> Positions(const std::vector<PlannedCheckpoint>& plan) {
  std::vector<int64_t> out;
  for (const auto& p : plan) out.push_back(p.position);
  return out;
}

TEST(CheckpointPlannerTest, DenseOrDisabledPlansNothing) {
  PrefixCacheConfig dense;
  CheckpointPlanInput in{.prompt_tokens = 10000, .stable_boundary = 9996};
  EXPECT_TRUE(PlanCheckpoints(dense, in).empty());
  PrefixCacheConfig off = Hybrid();
  off.enabled = false;
  EXPECT_TRUE(PlanCheckpoints(off, in).empty());
}

TEST(CheckpointPlannerTest, ColdPromptGetsRungsMessagesAndBoundary) {
  const std::vector<MessageStart> messages = {
      {0, Role::kSystem}, {9000, Role::kUser}, {9500, Role::kAssistant}, {9800, Role::kUser}};
  CheckpointPlanInput in{.prompt_tokens = 10000, .stable_boundary = 9996, .messages = messages};
  const auto plan = PlanCheckpoints(Hybrid(), in);
  ASSERT_EQ(Positions(plan), (std::vector<int64_t>{4096, 8192, 9000, 9500, 9800, 9996}));
  EXPECT_EQ(plan[0].kind, CheckpointKind::kRung);
  EXPECT_EQ(plan[2].kind, CheckpointKind::kMessage);
  EXPECT_EQ(plan.back().kind, CheckpointKind::kBoundary);
}

TEST(CheckpointPlannerTest, OnlyTheLastFewMessagesAreCheckpointed) {
  std::vector<MessageStart> messages;
  for (int i = 1; i <= 10; ++i) messages.push_back({i * 100, i % 2 ? Role::kUser : Role::kAssistant});
  PrefixCacheConfig config = Hybrid();
  config.max_message_checkpoints = 3;
  CheckpointPlanInput in{.prompt_tokens = 2000, .stable_boundary = 1990, .messages = messages};
  EXPECT_EQ(Positions(PlanCheckpoints(config, in)), (std::vector<int64_t>{800, 900, 1000, 1990}));
}

TEST(CheckpointPlannerTest, NothingAtOrBelowReuseOrAtPromptEndOrBelowMinReuse) {
  const std::vector<MessageStart> messages = {{0, Role::kSystem}, {10, Role::kUser}, {5000, Role::kUser}};
  CheckpointPlanInput in{.prompt_tokens = 9000, .stable_boundary = 9000,  // clamped to n - 1
                         .messages = messages, .reuse_tokens = 5000, .lcp = 5000};
  const auto plan = PlanCheckpoints(Hybrid(), in);
  EXPECT_EQ(Positions(plan), (std::vector<int64_t>{8192, 8999}));
}

TEST(CheckpointPlannerTest, RungsAreAbsoluteAndInheritedBelowReuse) {
  // Reuse at 10000 (a hit): rungs 4096 and 8192 already lie on the shared path.
  CheckpointPlanInput in{.prompt_tokens = 20000, .stable_boundary = 19990, .reuse_tokens = 10000,
                         .lcp = 10000};
  EXPECT_EQ(Positions(PlanCheckpoints(Hybrid(), in)), (std::vector<int64_t>{12288, 16384, 19990}));
  PrefixCacheConfig config = Hybrid();
  config.rung_tokens = 0;
  EXPECT_EQ(Positions(PlanCheckpoints(config, in)), (std::vector<int64_t>{19990}));
}

TEST(CheckpointPlannerTest, CachedPositionsAreNotResaved) {
  const std::vector<int64_t> cached = {4096, 9996};
  CheckpointPlanInput in{.prompt_tokens = 10000, .stable_boundary = 9996, .cached_checkpoints = cached};
  EXPECT_EQ(Positions(PlanCheckpoints(Hybrid(), in)), (std::vector<int64_t>{8192}));
}

TEST(CheckpointPlannerTest, AnchorAtDivergenceOfLongSharedMiss) {
  // Shares 7000 tokens with a cached entry but the deepest checkpoint is 4096.
  CheckpointPlanInput in{.prompt_tokens = 8000, .stable_boundary = 7990, .reuse_tokens = 4096, .lcp = 7000};
  const auto plan = PlanCheckpoints(Hybrid(), in);
  EXPECT_EQ(Positions(plan), (std::vector<int64_t>{7000, 7990}));
  EXPECT_EQ(plan[0].kind, CheckpointKind::kAnchor);
}

TEST(CheckpointPlannerTest, NoAnchorWhenTheGapIsSmallOrPrefixShortOrWholePromptShared) {
  const PrefixCacheConfig config = Hybrid();
  auto has_anchor = [&](CheckpointPlanInput in) {
    for (const auto& p : PlanCheckpoints(config, in)) {
      if (p.kind == CheckpointKind::kAnchor) return true;
    }
    return false;
  };
  EXPECT_FALSE(has_anchor({.prompt_tokens = 3000, .stable_boundary = 2990, .reuse_tokens = 2000, .lcp = 2010}));
  EXPECT_FALSE(has_anchor({.prompt_tokens = 3000, .stable_boundary = 2990, .reuse_tokens = 0, .lcp = 15}));
  EXPECT_FALSE(has_anchor({.prompt_tokens = 3000, .stable_boundary = 2990, .reuse_tokens = 0, .lcp = 3000}));
  EXPECT_TRUE(has_anchor({.prompt_tokens = 3000, .stable_boundary = 2990, .reuse_tokens = 0, .lcp = 16}));
}

TEST(CheckpointPlannerTest, CoincidingReasonsKeepTheMostSpecificKind) {
  const std::vector<MessageStart> messages = {{4096, Role::kUser}};
  CheckpointPlanInput in{.prompt_tokens = 4097, .stable_boundary = 4096, .messages = messages};
  auto plan = PlanCheckpoints(Hybrid(), in);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].kind, CheckpointKind::kBoundary);
  CheckpointPlanInput in2{.prompt_tokens = 9000, .stable_boundary = 8990, .messages = messages, .lcp = 4096};
  plan = PlanCheckpoints(Hybrid(), in2);
  ASSERT_EQ(plan[0].position, 4096);
  EXPECT_EQ(plan[0].kind, CheckpointKind::kAnchor);
}

TEST(CheckpointPlannerTest, MarksTakeTheFirstFewUsable) {
  // The planner takes the first max_mark_checkpoints usable marks (above reuse,
  // below the boundary, not cached already: an earlier session's marks on this
  // prefix push this request's further along).
  const std::vector<int64_t> marks = {50, 300, 700, 1200, 2000, 9999};
  const std::vector<int64_t> cached = {1200};
  PrefixCacheConfig config = Hybrid();
  config.max_mark_checkpoints = 3;
  CheckpointPlanInput in{.prompt_tokens = 10000, .stable_boundary = 9996, .reuse_tokens = 100,
                         .cached_checkpoints = cached, .marks = marks};
  const auto plan = PlanCheckpoints(config, in);
  EXPECT_EQ(Positions(plan), (std::vector<int64_t>{300, 700, 2000, 4096, 8192, 9996}));
  EXPECT_EQ(plan[0].kind, CheckpointKind::kMark);
  EXPECT_EQ(plan[2].kind, CheckpointKind::kMark);
  config.max_mark_checkpoints = 0;
  EXPECT_EQ(Positions(PlanCheckpoints(config, in)), (std::vector<int64_t>{4096, 8192, 9996}));
  // A message start at a mark's position keeps the message kind.
  const std::vector<MessageStart> messages = {{0, Role::kSystem}, {300, Role::kUser}};
  config.max_mark_checkpoints = 3;
  in.messages = messages;
  EXPECT_EQ(PlanCheckpoints(config, in)[0].kind, CheckpointKind::kMessage);
}

TEST(CheckpointPlannerTest, MarksAreTakenInPriorityOrderWithinTheirByteShare) {
  // The builder lists strong signals first: the planner keeps that order, not
  // the positions' (the plan itself is ascending).
  const std::vector<int64_t> marks = {900, 2500, 100, 300};
  PrefixCacheConfig config = Hybrid();
  config.rung_tokens = 0;
  config.max_mark_checkpoints = 16;
  config.budget_bytes = 1000;                 // checkpoint budget 500 bytes,
  config.checkpoint_budget_fraction = 0.5;    // a quarter of it (125) for marks:
  config.mark_budget_fraction = 0.25;
  CheckpointPlanInput in{.prompt_tokens = 5000, .stable_boundary = 4990, .marks = marks, .snapshot_bytes = 60};
  EXPECT_EQ(Positions(PlanCheckpoints(config, in)), (std::vector<int64_t>{900, 2500, 4990}));  // two snapshots fit
  in.snapshot_bytes = 0;  // unknown size: only the count caps
  EXPECT_EQ(Positions(PlanCheckpoints(config, in)), (std::vector<int64_t>{100, 300, 900, 2500, 4990}));
  in.snapshot_bytes = 200;  // not even one fits
  EXPECT_EQ(Positions(PlanCheckpoints(config, in)), (std::vector<int64_t>{4990}));
}

}  // namespace
}  // namespace cairn::cache
