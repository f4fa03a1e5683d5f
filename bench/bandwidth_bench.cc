// Read memory bandwidth of this machine: a streaming sum over a 1 GiB buffer
// with 1 and 2 threads (the persistent ThreadPool, contiguous halves). This is
// the roof that the decode (matrix-vector) MatMul is measured against in
// matmul_bench. GB/s is wall-clock; GB/s_cpu normalizes by process CPU time
// (this machine is shared with other builds).
//
//   build-mm/bench/bandwidth_bench
#include <benchmark/benchmark.h>
#include <time.h>

#include <cstdint>
#include <cstring>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"

namespace cairn {
namespace {

constexpr size_t kBytes = size_t{1} << 30;

const AlignedBuffer<uint64_t>& Buffer() {
  static const AlignedBuffer<uint64_t>* buffer = [] {
    auto* b = new AlignedBuffer<uint64_t>(kBytes / sizeof(uint64_t));
    // Touch every page (and make the data non-trivial) before timing.
    for (size_t i = 0; i < b->size(); ++i) (*b)[i] = i * 0x9E3779B97F4A7C15ull;
    return b;
  }();
  return *buffer;
}

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Eight independent accumulators so the loop is load-bound, not add-bound.
uint64_t SumRange(const uint64_t* p, size_t n) {
  uint64_t s[8] = {};
  for (size_t i = 0; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) s[j] += p[i + j];
  }
  uint64_t total = 0;
  for (uint64_t v : s) total += v;
  return total;
}

void BM_ReadBandwidth(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const AlignedBuffer<uint64_t>& buffer = Buffer();
  ThreadPool pool(threads);
  uint64_t sums[64] = {};
  const double cpu0 = ProcessCpuSeconds();
  for (auto _ : state) {
    pool.ParallelFor(static_cast<int64_t>(buffer.size()), 4096, [&](int64_t begin, int64_t end, int t) {
      sums[t * 8] += SumRange(buffer.data() + begin, static_cast<size_t>(end - begin));
    });
    benchmark::DoNotOptimize(sums);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kBytes));
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(kBytes) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  // The machine is shared: also report bytes per CPU-second per thread, the
  // rate with `threads` uncontended cores (see matmul_bench).
  const double cpu_per_thread = (ProcessCpuSeconds() - cpu0) / threads;
  state.counters["GB/s_cpu"] = static_cast<double>(kBytes) * static_cast<double>(state.iterations()) / cpu_per_thread / 1e9;
}
BENCHMARK(BM_ReadBandwidth)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
}  // namespace cairn

BENCHMARK_MAIN();
