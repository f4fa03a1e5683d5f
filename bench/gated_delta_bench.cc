// Gated DeltaNet microbenchmarks for one Qwen3.5-0.8B linear-attention layer
// (16 key heads / 16 value heads, d_k = d_v = 128: 1 MiB of F32 state).
// items = tokens. After the runs, prints the chunked / recurrent throughput
// ratio for a 512-token prefill chunk (single thread).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gated_delta.h"
#include "kernels/norm.h"
#include "kernels/targets.h"

namespace cairn::kernels {
namespace {

GatedDeltaShape Shape() {
  GatedDeltaShape sh;
  sh.n_k_heads = 16;
  sh.n_v_heads = 16;
  sh.d_k = 128;
  sh.d_v = 128;
  sh.q_scale = 1.0f / std::sqrt(128.0f);
  return sh;
}

struct Data {
  explicit Data(int64_t n) : q(n * 2048), k(n * 2048), v(n * 2048), g(n * 16), beta(n * 16),
                             out(n * 2048), state(Shape().StateFloats(), 0.01f) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (auto* vec : {&q, &k, &v}) for (float& x : *vec) x = dist(rng);
    L2NormHeads(q.data(), n, 16, 128, 2048, 128, 1e-6f);
    L2NormHeads(k.data(), n, 16, 128, 2048, 128, 1e-6f);
    for (float& x : g) x = -0.5f * (dist(rng) + 1.0f);
    for (float& x : beta) x = 0.5f * (dist(rng) + 1.0f);
    in = GatedDeltaInputs{q.data(), 2048, k.data(), 2048, v.data(), 2048, g.data(), beta.data()};
  }
  std::vector<float> q, k, v, g, beta, out, state;
  GatedDeltaInputs in;
};

// range(0) tokens, range(1) threads.
void BM_GdnRecurrent(benchmark::State& state) {
  const int64_t n = state.range(0);
  Data d(n);
  ThreadPool pool(static_cast<int>(state.range(1)));
  for (auto _ : state) GatedDeltaRecurrent(Shape(), d.in, n, d.state.data(), d.out.data(), 2048, pool);
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_GdnRecurrent)->Args({1, 1})->Args({1, 2})->Args({512, 1})->Args({512, 2})->UseRealTime();

void BM_GdnChunked(benchmark::State& state) {
  const int64_t n = state.range(0);
  Data d(n);
  ThreadPool pool(static_cast<int>(state.range(1)));
  for (auto _ : state) GatedDeltaChunked(Shape(), d.in, n, 0, d.state.data(), d.out.data(), 2048, pool);
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_GdnChunked)->Args({512, 1})->UseRealTime();

// Best-of-5 seconds of one 512-token run of each form (CPU-time noise on a
// shared machine is reduced by taking the minimum).
double BestSeconds(bool chunked) {
  Data d(512);
  ThreadPool pool(1);
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    if (chunked) {
      GatedDeltaChunked(Shape(), d.in, 512, 0, d.state.data(), d.out.data(), 2048, pool);
    } else {
      GatedDeltaRecurrent(Shape(), d.in, 512, d.state.data(), d.out.data(), 2048, pool);
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace
}  // namespace cairn::kernels

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("simd_target", cairn::kernels::ActiveTargetName());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const double rec = cairn::kernels::BestSeconds(false);
  const double chunk = cairn::kernels::BestSeconds(true);
  std::printf("512-token chunk, 1 thread: recurrent %.0f tok/s, chunked %.0f tok/s, chunked/recurrent = %.2f\n",
              512 / rec, 512 / chunk, rec / chunk);
  return 0;
}
