// Read memory bandwidth of this machine: a streaming sum over a 1 GiB buffer
// with 1 and 2 threads (the persistent ThreadPool, contiguous halves). This is
// the roof that the decode (matrix-vector) MatMul is measured against in
// matmul_bench. GB/s is wall-clock; GB/s_cpu normalizes by process CPU time
// (this machine is shared with other builds).
// BM_ReadRuns reads the same buffer in runs of a few KiB, each followed by a
// jump (as decode attention reads a paged KV cache) and, alternating in the
// same iteration, contiguously: of_contiguous is the runs' rate over the
// contiguous rate, measured side by side so the machine's drift cancels.
// kernels/attention.cc's RunStreamRate is taken from it.
//
//   build-mm/bench/bandwidth_bench
#include <benchmark/benchmark.h>
#include <time.h>

#include <chrono>
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

// One streaming sum over the whole buffer, contiguous slices per thread.
void ContiguousPass(ThreadPool& pool, const AlignedBuffer<uint64_t>& buffer, uint64_t* sums) {
  pool.ParallelFor(static_cast<int64_t>(buffer.size()), 4096, [&](int64_t begin, int64_t end, int t) {
    sums[t * 8] += SumRange(buffer.data() + begin, static_cast<size_t>(end - begin));
  });
}

void BM_ReadBandwidth(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const AlignedBuffer<uint64_t>& buffer = Buffer();
  ThreadPool pool(threads);
  uint64_t sums[64] = {};
  const double cpu0 = ProcessCpuSeconds();
  for (auto _ : state) {
    ContiguousPass(pool, buffer, sums);
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

// Args (run KiB, threads). Task i reads run i of the lower half, then run i
// of the upper half (K then V of one tile); tasks are handed out in order, so
// the threads' runs are interleaved in memory.
void BM_ReadRuns(benchmark::State& state) {
  const size_t run_words = static_cast<size_t>(state.range(0)) * 1024 / sizeof(uint64_t);
  const int threads = static_cast<int>(state.range(1));
  const AlignedBuffer<uint64_t>& buffer = Buffer();
  const size_t half = buffer.size() / 2;
  const int64_t runs = static_cast<int64_t>(half / run_words);
  ThreadPool pool(threads);
  uint64_t sums[64] = {};
  double runs_seconds = 0.0, contiguous_seconds = 0.0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    pool.Run(runs, [&](int64_t i, int t) {
      const uint64_t* run = buffer.data() + static_cast<size_t>(i) * run_words;
      sums[t * 8] += SumRange(run, run_words) + SumRange(run + half, run_words);
    });
    auto t1 = std::chrono::steady_clock::now();
    ContiguousPass(pool, buffer, sums);
    auto t2 = std::chrono::steady_clock::now();
    runs_seconds += std::chrono::duration<double>(t1 - t0).count();
    contiguous_seconds += std::chrono::duration<double>(t2 - t1).count();
    benchmark::DoNotOptimize(sums);
  }
  const double bytes = static_cast<double>(runs) * static_cast<double>(run_words) * 2 * sizeof(uint64_t);
  state.counters["runs_GB/s"] = bytes * static_cast<double>(state.iterations()) / runs_seconds / 1e9;
  state.counters["of_contiguous"] = (bytes / runs_seconds) / (static_cast<double>(kBytes) / contiguous_seconds);
}
BENCHMARK(BM_ReadRuns)
    ->ArgNames({"run_KiB", "threads"})
    ->ArgsProduct({{4, 16, 32, 64, 128, 256}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

}  // namespace
}  // namespace cairn

BENCHMARK_MAIN();
