// Randomised operation sequences against a brute-force model, with the
// invariant checker (structure, frozen blocks, exact bytes <= budget) after
// every step, for trim and checkpoint modes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "fake_state.h"

namespace cairn::cache {
namespace {

using testing::Concat;
using testing::RestoreIsExact;
using testing::RunRequest;
using testing::Seq;
using testing::TinyLayout;

constexpr int kB = 16;

int Iterations(int normal) {
  const char* sanitized = std::getenv("CAIRN_SANITIZED");
  return sanitized != nullptr && sanitized[0] == '1' ? normal / 5 : normal;
}

int64_t Lcp(const std::vector<Token>& a, const std::vector<Token>& b) { return CommonPrefix(a, b); }

// Workload: a few system prompts, sessions that grow turn by turn, branches
// (edits / regenerations) and fresh short requests.
class Workload {
 public:
  explicit Workload(uint32_t seed) : rng_(seed) {
    systems_ = {Seq(0), Seq(100, 1000000), Seq(250, 2000000)};
  }
  std::vector<Token> Next() {
    const int op = Pick(10);
    if (op < 5 && !sessions_.empty()) {  // next turn of a session
      auto& s = sessions_[Pick(static_cast<int>(sessions_.size()))];
      s = Concat(s, Fresh(10 + Pick(70)));
      return s;
    }
    if (op < 7 && !sessions_.empty()) {  // branch inside a session
      const auto& s = sessions_[Pick(static_cast<int>(sessions_.size()))];
      std::vector<Token> b(s.begin(), s.begin() + Pick(static_cast<int>(s.size())));
      return Concat(b, Fresh(1 + Pick(40)));
    }
    if (op < 8) return Fresh(1 + Pick(30));  // title-like request
    auto s = Concat(systems_[Pick(3)], Fresh(20 + Pick(60)));
    if (sessions_.size() < 6) {
      sessions_.push_back(s);
    } else {
      sessions_[Pick(6)] = s;
    }
    return s;
  }
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }

 private:
  std::vector<Token> Fresh(int n) {
    std::vector<Token> out(static_cast<size_t>(n));
    for (auto& t : out) t = static_cast<Token>(rng_() % 50000);
    return out;
  }
  std::mt19937 rng_;
  std::vector<std::vector<Token>> systems_;
  std::vector<std::vector<Token>> sessions_;
};

class RandomOpsTest : public ::testing::TestWithParam<bool> {};

// Unlimited budget: Lookup must find exactly what a brute-force scan finds.
TEST_P(RandomOpsTest, MatchesBruteForceWithoutEviction) {
  const bool hybrid = GetParam();
  PrefixCacheConfig config;
  config.hybrid = hybrid;
  config.block_tokens = kB;
  config.rung_tokens = 128;
  config.max_checkpoints_per_path = 100000;
  config.budget_bytes = size_t{1} << 30;
  PrefixCache cache(config);
  const KvLayout layout = TinyLayout(kB);
  Workload work(hybrid ? 7 : 11);
  std::vector<std::vector<Token>> inserted;
  std::vector<std::pair<size_t, int64_t>> checkpoints;  // (inserted index, position)
  for (int step = 0; step < Iterations(300); ++step) {
    const auto prompt = work.Next();
    const int64_t n = static_cast<int64_t>(prompt.size());
    int64_t best_lcp = 0;
    for (const auto& s : inserted) best_lcp = std::max(best_lcp, Lcp(prompt, s));
    int64_t expected = 0;
    if (!hybrid) {
      expected = std::min(best_lcp, n - 1) >= config.min_reuse ? std::min(best_lcp, n - 1) : 0;
    } else {
      for (const auto& [i, p] : checkpoints) {
        if (p < n && p >= config.min_reuse && Lcp(prompt, inserted[i]) >= p) expected = std::max(expected, p);
      }
    }
    const std::vector<MessageStart> messages = {{0, Role::kSystem}, {n / 2, Role::kUser}};
    testing::RequestOptions options{.messages = messages, .unstable_tail = 1 + work.Pick(3)};
    if (work.Pick(2) == 0) options.generated = Seq(work.Pick(20), 3000000 + step * 100);
    options.end_checkpoint = work.Pick(2) == 0;
    const auto out = RunRequest(cache, layout, prompt, options);
    ASSERT_EQ(out.hit.lcp, best_lcp) << "step " << step;
    ASSERT_EQ(out.hit.reuse_tokens, expected) << "step " << step;
    ASSERT_TRUE(RestoreIsExact(out.hit, prompt, kB)) << "step " << step;
    inserted.push_back(Concat(prompt, options.generated));
    for (const auto& p : out.planned) checkpoints.push_back({inserted.size() - 1, p.position});
    if (options.end_checkpoint && hybrid) {
      checkpoints.push_back({inserted.size() - 1, static_cast<int64_t>(inserted.back().size())});
    }
    cache.CheckInvariants();
  }
}

// Tight, changing budgets with shedding: never over budget, restores exact.
TEST_P(RandomOpsTest, BudgetNeverExceededAndRestoresStayExact) {
  const bool hybrid = GetParam();
  PrefixCacheConfig config;
  config.hybrid = hybrid;
  config.block_tokens = kB;
  config.rung_tokens = 128;
  config.max_checkpoints_per_path = 6;
  config.short_prompt_tokens = 64;
  const KvLayout layout = TinyLayout(kB);
  config.budget_bytes = 60 * layout.BlockBytes();
  PrefixCache cache(config);
  Workload work(hybrid ? 3 : 5);
  for (int step = 0; step < Iterations(400); ++step) {
    const int op = work.Pick(20);
    if (op == 0) {
      cache.SetBudget(static_cast<size_t>(10 + work.Pick(100)) * layout.BlockBytes());
    } else if (op == 1) {
      cache.Shed(ShedLevel::kWarn);
    } else if (op == 2 && work.Pick(10) == 0) {
      cache.Shed(ShedLevel::kCritical);
    } else {
      const auto prompt = work.Next();
      const int64_t n = static_cast<int64_t>(prompt.size());
      const std::vector<MessageStart> messages = {{0, Role::kSystem}, {n / 3, Role::kUser}};
      const auto out = RunRequest(cache, layout, prompt, {.messages = messages, .end_checkpoint = true});
      ASSERT_TRUE(RestoreIsExact(out.hit, prompt, kB)) << "step " << step;
      ASSERT_LT(out.hit.reuse_tokens, std::max<int64_t>(n, 1));
      ASSERT_LE(out.hit.reuse_tokens, out.hit.lcp);
    }
    cache.CheckInvariants();
    const CacheStats stats = cache.Stats();
    ASSERT_LE(stats.bytes_held, stats.budget_bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, RandomOpsTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Hybrid") : std::string("Dense");
                         });

}  // namespace
}  // namespace cairn::cache
