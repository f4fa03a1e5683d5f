// Attention microbenchmarks at the attention shapes of the two model presets
// (F16 KV in 64-token blocks, as the model stores it; the decode and prefill
// cases also with the Q8_0 K cache of `--cache-type-k q8_0`, arg kq8 = 1):
//   q35: Qwen3.5-0.8B, 8 query heads / 2 KV heads x 256, 6 attention layers
//   q3:  Qwen3-0.6B, 16 query heads / 8 KV heads x 128, 28 attention layers
//
// Decode (one row at the end of `ctx` cached tokens): each iteration runs the
// next layer of `layers` distinct KV caches, round robin, as a decode step
// does, so the KV comes from memory, not from the last iteration's cache
// (0.8B at 4k: 6 x 8 MB; 0.6B at 16k: 28 x 64 MB). kv_GB/s = K+V bytes read
// per second of wall time; compare with bandwidth_bench (~20-30 GB/s here).
// Prefill (`rows` causal rows after `start` cached tokens): GFLOP/s counts
// 2 flops per multiply-add of q.k and p.v over the visible keys.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/kv_block.h"
#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/kv_write.h"
#include "kernels/targets.h"

namespace cairn::kernels {
namespace {

constexpr int kBlock = 64;

struct Shape {
  int heads, kv_heads, head_dim, layers;
};
constexpr Shape kQwen35{8, 2, 256, 6};
constexpr Shape kQwen3{16, 8, 128, 28};

const Shape& ShapeOf(int64_t id) { return id == 0 ? kQwen35 : kQwen3; }
const char* NameOf(int64_t id) { return id == 0 ? "q35-0.8b" : "q3-0.6b"; }

// `layers` caches of n tokens. One random block of K and V is copied into
// every block (timing does not depend on the values; random rows everywhere
// would take seconds to generate for the 1.8 GB of the largest case).
struct Kv {
  Kv(const Shape& s, int64_t n, int layers, bool k_q8 = false) {
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    KvLayout layout;
    layout.n_kv_heads = s.kv_heads;
    layout.head_dim = s.head_dim;
    layout.block_tokens = kBlock;
    layout.k_q8 = k_q8;
    const size_t k_slab = layout.SlabBytes(0), slab = layout.SlabBytes(1);
    AlignedBuffer<uint8_t> k_src(k_slab), v_src(slab);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> row(static_cast<size_t>(s.kv_heads) * s.head_dim);
    for (int t = 0; t < kBlock; ++t) {
      for (float& x : row) x = dist(rng);
      StoreKvToken(layout.KType(), s.kv_heads, s.head_dim, kBlock, row.data(), k_src.data(), t);
      for (float& x : row) x = dist(rng);
      StoreKvToken(DType::kF16, s.kv_heads, s.head_dim, kBlock, row.data(), v_src.data(), t);
    }
    ptrs.resize(static_cast<size_t>(layers) * 2 * blocks);
    for (int l = 0; l < layers; ++l) {
      for (int64_t b = 0; b < blocks; ++b) {
        slabs.emplace_back(k_slab);
        std::memcpy(slabs.back().data(), k_src.data(), k_slab);
        ptrs[(2 * l) * blocks + b] = slabs.back().data();
        slabs.emplace_back(slab);
        std::memcpy(slabs.back().data(), v_src.data(), slab);
        ptrs[(2 * l + 1) * blocks + b] = slabs.back().data();
      }
      KvView view;
      view.k_q8 = k_q8;
      view.block_tokens = kBlock;
      view.n_kv_heads = s.kv_heads;
      view.head_dim = s.head_dim;
      view.k_blocks = ptrs.data() + 2 * l * blocks;
      view.v_blocks = ptrs.data() + (2 * l + 1) * blocks;
      view.n_tokens = n;
      views.push_back(view);
    }
  }
  std::vector<AlignedBuffer<uint8_t>> slabs;
  std::vector<const uint8_t*> ptrs;
  std::vector<KvView> views;
};

AttentionParams Params(const Shape& s) {
  AttentionParams p;
  p.n_heads = s.heads;
  p.n_kv_heads = s.kv_heads;
  p.head_dim = s.head_dim;
  p.scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  return p;
}

// Labels a decode benchmark and reports the K+V bytes read per call (F16: 2
// bytes per element; Q8_0 K: 1 + 1/16) as kv_GB/s.
void ReportKvRate(benchmark::State& state, const Shape& s, int64_t ctx, bool k_q8 = false) {
  state.SetLabel(NameOf(state.range(0)));
  state.SetItemsProcessed(state.iterations());
  const double bytes = static_cast<double>(ctx) * s.kv_heads * s.head_dim * (k_q8 ? 2 + 1 + 1.0 / 16 : 2 * 2);
  state.counters["kv_GB/s"] =
      benchmark::Counter(bytes * state.iterations(), benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

// One decode row at the end of `ctx` cached tokens, from the benchmark args
// (shape, ctx, threads), over `layers` KV caches.
struct DecodeCase {
  DecodeCase(const benchmark::State& state, int layers, bool k_q8 = false)
      : s(ShapeOf(state.range(0))),
        ctx(state.range(1)),
        kv(s, ctx, layers, k_q8),
        pool(static_cast<int>(state.range(2))),
        q(static_cast<size_t>(s.heads) * s.head_dim, 0.1f),
        out(q.size()) {}
  void Run(const AttentionParams& p, size_t layer) {
    Attention(p, q.data(), 1, ctx - 1, kv.views[layer], out.data(), pool);
  }
  const Shape& s;
  int64_t ctx;
  Kv kv;
  ThreadPool pool;
  std::vector<float> q, out;
};

// Decode: args (shape, ctx, threads, kq8).
void BM_AttentionDecode(benchmark::State& state) {
  DecodeCase c(state, ShapeOf(state.range(0)).layers, state.range(3) != 0);
  size_t layer = 0;
  for (auto _ : state) {
    c.Run(Params(c.s), layer);
    layer = (layer + 1) % c.kv.views.size();
  }
  ReportKvRate(state, c.s, c.ctx, state.range(3) != 0);
}
BENCHMARK(BM_AttentionDecode)
    ->ArgNames({"shape", "ctx", "threads", "kq8"})
    ->ArgsProduct({{0, 1}, {4096, 16384}, {1, 2}, {0, 1}})
    ->UseRealTime();

// Split-KV head groups, side by side in one process: each iteration runs the
// next layer with one KV head per task, then the next layer with the
// kernel's own choice (attention.h, "Work split"), timing each call. Reports
// kv_GB/s of the kernel's choice and speedup_vs_1_head (total time with one
// head per task / total time with the choice); alternating call by call
// cancels this machine's drift. Args (shape, ctx, threads).
void BM_AttentionDecodeHeadGroups(benchmark::State& state) {
  DecodeCase c(state, ShapeOf(state.range(0)).layers);
  AttentionParams one_head = Params(c.s);
  one_head.split_heads_per_task = 1;
  double seconds[2] = {0.0, 0.0};
  size_t layer = 0;
  for (auto _ : state) {
    for (int v = 0; v < 2; ++v) {
      const auto t0 = std::chrono::steady_clock::now();
      c.Run(v == 0 ? one_head : Params(c.s), layer);
      seconds[v] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      layer = (layer + 1) % c.kv.views.size();
    }
  }
  state.SetLabel(NameOf(state.range(0)));
  const double bytes = static_cast<double>(c.ctx) * c.s.kv_heads * c.s.head_dim * 2 * 2;
  state.counters["kv_GB/s"] = bytes * static_cast<double>(state.iterations()) / seconds[1] / 1e9;
  state.counters["speedup_vs_1_head"] = seconds[0] / seconds[1];
}
BENCHMARK(BM_AttentionDecodeHeadGroups)
    ->ArgNames({"shape", "ctx", "threads"})
    ->ArgsProduct({{0, 1}, {4096, 6144, 16384}, {1, 2}})
    ->UseRealTime()
    ->MinTime(2.0);

// Decode over one cache of `ctx` tokens, the same every iteration, so the KV
// (8 MB for q35, 16 MB for q3 at 4096; L3 is 32 MB here) stays in the L3
// cache: the kernel's compute rate, an upper bound for the from-memory rate
// above. Args (shape, ctx, threads).
void BM_AttentionDecodeHot(benchmark::State& state) {
  DecodeCase c(state, 1);
  for (auto _ : state) c.Run(Params(c.s), 0);
  ReportKvRate(state, c.s, c.ctx);
}
BENCHMARK(BM_AttentionDecodeHot)
    ->ArgNames({"shape", "ctx", "threads"})
    ->ArgsProduct({{0, 1}, {4096}, {1, 2}})
    ->UseRealTime();

// Prefill chunk: args (shape, rows, start, threads, kq8); rows at positions
// [start, start + rows), causal, one cache.
void BM_AttentionPrefill(benchmark::State& state) {
  const Shape& s = ShapeOf(state.range(0));
  const int64_t rows = state.range(1), start = state.range(2);
  Kv kv(s, start + rows, 1, state.range(4) != 0);
  ThreadPool pool(static_cast<int>(state.range(3)));
  std::vector<float> q(static_cast<size_t>(rows) * s.heads * s.head_dim, 0.05f), out(q.size());
  for (auto _ : state) Attention(Params(s), q.data(), rows, start, kv.views[0], out.data(), pool);
  state.SetLabel(NameOf(state.range(0)));
  state.SetItemsProcessed(state.iterations() * rows);
  // Visible keys summed over rows: row i sees start + i + 1 keys.
  const double keys = static_cast<double>(rows) * start + static_cast<double>(rows) * (rows + 1) / 2;
  const double flops = keys * s.heads * s.head_dim * 2 /* q.k and p.v */ * 2 /* flops per FMA */;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * state.iterations(), benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_AttentionPrefill)
    ->ArgNames({"shape", "rows", "start", "threads", "kq8"})
    ->ArgsProduct({{0, 1}, {512}, {0, 4096, 16384}, {1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace cairn::kernels

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("simd_target", cairn::kernels::ActiveTargetName());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
