// Prefix cache: lookup + insert of a 30k-token agent prompt (B = 64), the
// per-request overhead Cairn adds before prefill. Must stay far below 1 ms.

#include <benchmark/benchmark.h>

#include "cache/prefix_cache.h"

#include <numeric>
#include <vector>

namespace cairn::cache {
namespace {

constexpr int kB = 64;
constexpr int64_t kPrompt = 30000;
constexpr int kVariants = 16;

KvLayout Layout() {
  KvLayout layout;
  layout.n_attn_layers = 1;
  layout.n_kv_heads = 1;
  layout.head_dim = 4;
  layout.block_tokens = kB;
  return layout;
}

struct Fixture {
  explicit Fixture(bool hybrid) : layout(Layout()) {
    PrefixCacheConfig config;
    config.hybrid = hybrid;
    config.block_tokens = kB;
    config.budget_bytes = size_t{1} << 30;
    cache = std::make_unique<PrefixCache>(config);
    std::vector<Token> base(kPrompt - 200);
    std::iota(base.begin(), base.end(), 1);
    for (int v = 0; v < kVariants; ++v) {
      std::vector<Token> p = base;
      for (int i = 0; i < 200; ++i) p.push_back(100000 + v * 1000 + i);
      KvBlockTable table;
      for (int64_t b = 0; b * kB < kPrompt; ++b) table.push_back(std::make_shared<KvBlock>(layout));
      std::vector<Checkpoint> checkpoints;
      if (hybrid) {
        for (int64_t pos : {int64_t{4096}, int64_t{8192}, kPrompt - 250, kPrompt - 1}) {
          checkpoints.push_back({pos, std::make_shared<const RecurrentSnapshot>(pos, AlignedBuffer<uint8_t>(64)),
                                 CheckpointKind::kRung});
        }
      }
      prompts.push_back(std::move(p));
      tables.push_back(std::move(table));
      snapshots.push_back(std::move(checkpoints));
      cache->Insert(prompts.back(), tables.back(), snapshots.back());
    }
  }
  KvLayout layout;
  std::unique_ptr<PrefixCache> cache;
  std::vector<std::vector<Token>> prompts;
  std::vector<KvBlockTable> tables;
  std::vector<std::vector<Checkpoint>> snapshots;
};

void BM_Lookup30k(benchmark::State& state) {
  Fixture f(state.range(0) != 0);
  int v = 0;
  for (auto _ : state) {
    LookupResult r = f.cache->Lookup(f.prompts[v]);
    benchmark::DoNotOptimize(r.reuse_tokens);
    v = (v + 1) % kVariants;
  }
}
BENCHMARK(BM_Lookup30k)->Arg(0)->Arg(1)->ArgName("hybrid")->Unit(benchmark::kMicrosecond);

// Lookup then re-insert of the same 30k-token sequence (all 469 blocks shared:
// the walk every finished request pays).
void BM_LookupInsert30k(benchmark::State& state) {
  Fixture f(state.range(0) != 0);
  int v = 0;
  for (auto _ : state) {
    LookupResult r = f.cache->Lookup(f.prompts[v]);
    InsertResult i = f.cache->Insert(f.prompts[v], f.tables[v], f.snapshots[v]);
    benchmark::DoNotOptimize(r.reuse_tokens + i.shared_blocks);
    v = (v + 1) % kVariants;
  }
}
BENCHMARK(BM_LookupInsert30k)->Arg(0)->Arg(1)->ArgName("hybrid")->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace cairn::cache

BENCHMARK_MAIN();
