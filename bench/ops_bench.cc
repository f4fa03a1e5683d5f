// Microbenchmarks of the elementwise/norm/RoPE/softmax/conv kernels at
// Qwen3.5-0.8B shapes (hidden 1024, FFN 3584, 8 q heads x 256 with 64 rotary
// dims, conv dim 6144). Single thread; items = tokens (rows).
#include <benchmark/benchmark.h>

#include "core/thread_pool.h"

#include <cmath>
#include <random>
#include <vector>

#include "kernels/activation.h"
#include "kernels/conv1d.h"
#include "kernels/norm.h"
#include "kernels/rope.h"
#include "kernels/softmax.h"
#include "kernels/targets.h"

namespace cairn::kernels {
namespace {

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void BM_RmsNorm1024(benchmark::State& state) {
  const int64_t rows = state.range(0);
  std::vector<float> x = Random(rows * 1024, 1), w = Random(1024, 2);
  for (auto _ : state) {
    RmsNorm(x.data(), 1024, w.data(), 1e-6f, rows, 1024, x.data(), 1024);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * rows);
}
BENCHMARK(BM_RmsNorm1024)->Arg(1)->Arg(512);

void BM_QkNormRope(benchmark::State& state) {   // q_norm + partial RoPE of 8 heads
  const int64_t rows = state.range(0);
  std::vector<float> q = Random(rows * 8 * 256, 3), w = Random(256, 4);
  std::vector<int64_t> pos(rows);
  for (int64_t i = 0; i < rows; ++i) pos[i] = 1000 + i;
  RopeTable table(64, 1e7f);
  for (auto _ : state) {
    table.Compute(pos.data(), rows);
    RmsNormHeads(q.data(), rows, 8, 256, 8 * 256, 256, w.data(), 1e-6f);
    ApplyRope(table, q.data(), rows, 8, 8 * 256, 256);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * rows);
}
BENCHMARK(BM_QkNormRope)->Arg(1)->Arg(512);

void BM_SwiGlu3584(benchmark::State& state) {
  const int64_t rows = state.range(0);
  std::vector<float> g = Random(rows * 3584, 5), u = Random(rows * 3584, 6);
  for (auto _ : state) {
    SwiGlu(g.data(), u.data(), u.data(), rows * 3584);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * rows);
}
BENCHMARK(BM_SwiGlu3584)->Arg(1)->Arg(512);

void BM_Exp(benchmark::State& state) {
  std::vector<float> x = Random(1 << 16, 7), y(1 << 16);
  for (auto _ : state) {
    Exp(x.data(), y.data(), 1 << 16);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * (1 << 16));   // items = floats
}
BENCHMARK(BM_Exp);

void BM_SoftmaxVocab(benchmark::State& state) {   // one row over Qwen3.5's vocab
  std::vector<float> x = Random(248320, 8), y(248320);
  for (auto _ : state) {
    Softmax(x.data(), y.data(), 1, 248320);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SoftmaxVocab);

void BM_Conv1dSilu6144(benchmark::State& state) {
  const int64_t rows = state.range(0);
  std::vector<float> x = Random(rows * 6144, 9), w = Random(6144 * 4, 10), st(3 * 6144, 0.0f),
                     out(rows * 6144);
  for (auto _ : state) {
    CausalConv1d(x.data(), 6144, rows, 6144, 4, w.data(), st.data(), true, out.data(), 6144);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * rows);
}
BENCHMARK(BM_Conv1dSilu6144)->Arg(1)->Arg(512);

// The pool overload (row order, 2 threads), as the Gated DeltaNet block calls it.
void BM_Conv1dSilu6144Pool(benchmark::State& state) {
  const int64_t rows = state.range(0);
  static ThreadPool pool(2);
  std::vector<float> x = Random(rows * 6144, 9), w = Random(6144 * 4, 10), st(3 * 6144, 0.0f),
                     out(rows * 6144);
  for (auto _ : state) {
    CausalConv1d(x.data(), 6144, rows, 6144, 4, w.data(), st.data(), true, out.data(), 6144, pool);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * rows);
}
BENCHMARK(BM_Conv1dSilu6144Pool)->Arg(1)->Arg(512)->UseRealTime();

}  // namespace
}  // namespace cairn::kernels

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("simd_target", cairn::kernels::ActiveTargetName());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
