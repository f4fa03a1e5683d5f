// Several threads doing lookups and inserts on one cache while another
// checks invariants and changes the budget. Every restore must stay exact.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>

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

class ConcurrencyTest : public ::testing::TestWithParam<bool> {};

TEST_P(ConcurrencyTest, ReadersAndWritersKeepInvariantsAndExactRestores) {
  PrefixCacheConfig config;
  config.hybrid = GetParam();
  config.block_tokens = kB;
  config.rung_tokens = 64;
  config.short_prompt_tokens = 32;
  const KvLayout layout = TinyLayout(kB);
  config.budget_bytes = 80 * layout.BlockBytes();
  PrefixCache cache(config);
  const std::vector<Token> systems[2] = {Seq(120, 1000000), Seq(60, 2000000)};

  std::atomic<int> failures{0};
  std::atomic<bool> stop{false};
  auto worker = [&](uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<Token> session = systems[seed % 2];
    for (int i = 0; i < Iterations(200); ++i) {
      std::vector<Token> turn(static_cast<size_t>(5 + rng() % 40));
      for (auto& t : turn) t = static_cast<Token>(rng() % 1000);
      if (rng() % 8 == 0) session = systems[rng() % 2];
      session = Concat(session, turn);
      if (session.size() > 600) session = systems[rng() % 2];
      if (rng() % 3 == 0) {
        const auto hit = cache.Lookup(session);  // reader only
        if (!RestoreIsExact(hit, session, kB)) ++failures;
      } else {
        const auto out = RunRequest(cache, layout, session, {.end_checkpoint = true});
        if (!RestoreIsExact(out.hit, session, kB)) ++failures;
      }
    }
  };
  std::thread checker([&] {
    int round = 0;
    while (!stop.load()) {
      cache.CheckInvariants();
      if (++round % 8 == 0) cache.SetBudget(static_cast<size_t>(40 + round % 80) * layout.BlockBytes());
      (void)cache.List();
      (void)cache.Stats();
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> workers;
  for (uint32_t t = 0; t < 4; ++t) workers.emplace_back(worker, t + 1);
  for (auto& w : workers) w.join();
  stop = true;
  checker.join();
  cache.CheckInvariants();
  EXPECT_EQ(failures.load(), 0);
  const CacheStats stats = cache.Stats();
  EXPECT_GT(stats.lookups, 0u);
  EXPECT_LE(stats.bytes_held, stats.budget_bytes);
}

INSTANTIATE_TEST_SUITE_P(Modes, ConcurrencyTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Hybrid") : std::string("Dense");
                         });

}  // namespace
}  // namespace cairn::cache
