// Attention microbenchmarks at Qwen3.5-0.8B's full-attention shape (8 query
// heads / 2 KV heads x 256, F16 KV in 64-token blocks). items = query rows.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/kv_write.h"
#include "kernels/targets.h"

namespace cairn::kernels {
namespace {

constexpr int kHeads = 8, kKvHeads = 2, kHeadDim = 256, kBlock = 64;

struct Kv {
  explicit Kv(int64_t n) {
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    const size_t slab = static_cast<size_t>(kBlock) * kKvHeads * kHeadDim * 2;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> row(kKvHeads * kHeadDim);
    for (int64_t b = 0; b < 2 * blocks; ++b) {
      slabs.emplace_back(slab);
      for (int t = 0; t < kBlock; ++t) {
        for (float& x : row) x = dist(rng);
        StoreKvToken(DType::kF16, kKvHeads, kHeadDim, row.data(), slabs.back().data(), t);
      }
    }
    for (int64_t b = 0; b < blocks; ++b) {
      k.push_back(slabs[2 * b].data());
      v.push_back(slabs[2 * b + 1].data());
    }
    view = KvView{DType::kF16, kBlock, kKvHeads, kHeadDim, k.data(), v.data(), n};
  }
  std::vector<AlignedBuffer<uint8_t>> slabs;
  std::vector<const uint8_t*> k, v;
  KvView view;
};

AttentionParams Params() {
  AttentionParams p;
  p.n_heads = kHeads;
  p.n_kv_heads = kKvHeads;
  p.head_dim = kHeadDim;
  p.scale = 1.0f / 16.0f;
  return p;
}

// Decode: one row at the end of a context of range(0) tokens; range(1) threads.
void BM_AttentionDecode(benchmark::State& state) {
  const int64_t ctx = state.range(0);
  Kv kv(ctx);
  ThreadPool pool(static_cast<int>(state.range(1)));
  std::vector<float> q(kHeads * kHeadDim, 0.1f), out(q.size());
  for (auto _ : state) Attention(Params(), q.data(), 1, ctx - 1, kv.view, out.data(), pool);
  state.SetItemsProcessed(state.iterations());
  state.counters["kv_GB/s"] = benchmark::Counter(static_cast<double>(ctx) * kKvHeads * kHeadDim * 4 * state.iterations(),
                                                 benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_AttentionDecode)->Args({4096, 1})->Args({4096, 2})->Args({16384, 2})->UseRealTime();

// Prefill chunk: range(0) rows at positions [start, start + rows), causal.
void BM_AttentionPrefill(benchmark::State& state) {
  const int64_t rows = state.range(0), start = state.range(1);
  Kv kv(start + rows);
  ThreadPool pool(1);
  std::vector<float> q(rows * kHeads * kHeadDim, 0.05f), out(q.size());
  for (auto _ : state) Attention(Params(), q.data(), rows, start, kv.view, out.data(), pool);
  state.SetItemsProcessed(state.iterations() * rows);
}
BENCHMARK(BM_AttentionPrefill)->Args({512, 0})->Args({512, 4096})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cairn::kernels

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("simd_target", cairn::kernels::ActiveTargetName());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
