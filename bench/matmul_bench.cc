// MatMul throughput (docs/benchmarks.md, "Kernels: matmul and bandwidth").
//
//   build-quant/bench/matmul_bench [--benchmark_filter=...]
//
// (a) Decode, matrix-vector: Q8_0 and Q4_K matrices of 32..256 MB, 2 threads.
//     Counters: GB/s of weight bytes read, and "of_bw", the fraction of this
//     machine's read bandwidth (measured at startup like bandwidth_bench:
//     streaming sum over 512 MiB with 2 threads).
// (b) Widths 1..512 on a 64 MB matrix: "vs_w1" = time per call / time at
//     width 1 (speculative verification wants width 8 <= 2x width 1), and
//     for width >= 64 "GMAC/s" and "of_peak", the fraction of the int8
//     multiply-accumulate peak of the active target on the threads used:
//       peak = threads * f * lanes_per_op * ops_per_cycle,
//     f * ops_per_cycle measured directly by a loop of independent maddubs
//     (best of 7; AVX2: lanes_per_op = 32 int8 MACs per vpmaddubsw ymm; Zen 3
//     shows 2 per cycle), and f alone by a dependent-add loop (1 cycle per
//     add) for information.
// (c) Thread-pool overhead: a 1024 x 1024 matrix at width 1 with 1 and 2
//     threads (see BM_SmallDecode).
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "kernels/targets.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace cairn::kernels {
namespace {

constexpr int kThreads = 2;

// This machine is shared: wall-clock rates suffer whenever other processes
// take the cores, so every case also reports "_cpu" rates computed from the
// process CPU time divided by the thread count, i.e. the wall time the call
// would take with kThreads uncontended cores (pool spin-waits count as busy).
double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct CallTime {
  double wall = 0;  // seconds per call
  double cpu = 0;   // process CPU seconds per call / kThreads
};

template <class F>
CallTime TimeLoop(benchmark::State& state, F&& call) {
  const double cpu0 = ProcessCpuSeconds();
  Stopwatch sw;
  for (auto _ : state) {
    call();
    benchmark::ClobberMemory();
  }
  const double n = static_cast<double>(state.iterations());
  return CallTime{sw.Seconds() / n, (ProcessCpuSeconds() - cpu0) / n / kThreads};
}
constexpr int64_t kCols = 4096;

ThreadPool& Pool() {
  static ThreadPool pool(kThreads);
  return pool;
}

// Read bandwidth (bytes/s) with kThreads threads over 512 MiB: wall-clock and
// CPU-normalized (see CallTime), best of 5.
struct Bandwidth {
  double wall, cpu;
};
Bandwidth MeasuredBandwidth() {
  static const Bandwidth bw = [] {
    AlignedBuffer<uint64_t> buf((size_t{512} << 20) / 8);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = i;
    uint64_t sums[64] = {};
    Bandwidth best{0, 0};
    for (int rep = 0; rep < 5; ++rep) {
      const double cpu0 = ProcessCpuSeconds();
      Stopwatch sw;
      Pool().ParallelFor(static_cast<int64_t>(buf.size()), 4096, [&](int64_t b, int64_t e, int t) {
        uint64_t s[8] = {};
        for (int64_t i = b; i + 8 <= e; i += 8) {
          for (int j = 0; j < 8; ++j) s[j] += buf[i + j];
        }
        for (uint64_t v : s) sums[t * 8] += v;
      });
      const double wall = sw.Seconds(), cpu = (ProcessCpuSeconds() - cpu0) / kThreads;
      best.wall = std::max(best.wall, static_cast<double>(buf.bytes()) / wall);
      best.cpu = std::max(best.cpu, static_cast<double>(buf.bytes()) / cpu);
    }
    benchmark::DoNotOptimize(sums);
    std::printf("measured read bandwidth (%d threads, 512 MiB): %.2f GB/s wall, %.2f GB/s cpu-normalized\n", kThreads,
                best.wall / 1e9, best.cpu / 1e9);
    return best;
  }();
  return bw;
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) double MaddubsPerSecond() {
  // Eight independent chains in named registers (latency 3-4 cycles each, so
  // 8 chains cover 2 ops/cycle); the empty asm keeps the compiler from
  // folding or spilling them.
  __m256i a0 = _mm256_set1_epi8(1), a1 = _mm256_set1_epi8(2), a2 = _mm256_set1_epi8(3), a3 = _mm256_set1_epi8(4);
  __m256i a4 = _mm256_set1_epi8(5), a5 = _mm256_set1_epi8(6), a6 = _mm256_set1_epi8(7), a7 = _mm256_set1_epi8(8);
  const __m256i x = _mm256_set1_epi8(1);
  // Best of 7 short runs: on a shared machine the fastest run is the one that
  // was least disturbed.
  const int64_t iters = 5'000'000;
  double best = 0;
  for (int rep = 0; rep < 7; ++rep) {
    const double t0 = ThreadCpuSeconds();
    for (int64_t n = 0; n < iters; ++n) {
      a0 = _mm256_maddubs_epi16(a0, x);
      a1 = _mm256_maddubs_epi16(a1, x);
      a2 = _mm256_maddubs_epi16(a2, x);
      a3 = _mm256_maddubs_epi16(a3, x);
      a4 = _mm256_maddubs_epi16(a4, x);
      a5 = _mm256_maddubs_epi16(a5, x);
      a6 = _mm256_maddubs_epi16(a6, x);
      a7 = _mm256_maddubs_epi16(a7, x);
      __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), "+x"(a7));
    }
    best = std::max(best, 8.0 * iters / (ThreadCpuSeconds() - t0));
  }
  // Consume a combination, not a0/a7 themselves: DoNotOptimize(a0) made GCC
  // keep two chains on the stack (a store and a load inside each dependency
  // chain), which capped this loop at ~0.8 maddubs/cycle instead of 2.
  const __m256i all = _mm256_xor_si256(_mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3)),
                                       _mm256_xor_si256(_mm256_xor_si256(a4, a5), _mm256_xor_si256(a6, a7)));
  benchmark::DoNotOptimize(all);
  return best;
}
#endif

// Clock estimate: a chain of dependent 1-cycle adds.
double ClockHz() {
  uint64_t v = 0;
  const int64_t iters = 50'000'000;
  double best = 0;
  for (int rep = 0; rep < 7; ++rep) {
    const double t0 = ThreadCpuSeconds();
    for (int64_t i = 0; i < iters; ++i) __asm__ volatile("add $1, %0" : "+r"(v));
    best = std::max(best, iters / (ThreadCpuSeconds() - t0));
  }
  benchmark::DoNotOptimize(v);
  return best;
}

// int8 MACs per second per core for the active target.
double PeakMacsPerCore() {
  static const double peak = [] {
    const double hz = ClockHz();
    double macs = 0;
#if defined(__x86_64__)
    const double maddubs = MaddubsPerSecond();
    const std::string target = ActiveTargetName();
    // AVX-512 targets do 64 MACs per instruction; VNNI also folds the madd.
    const double lanes = (target == "AVX3" || target == "AVX3_DL") ? 64 : 32;
    macs = maddubs * lanes;  // AVX-512 throughput assumed equal per instruction
    std::printf("clock ~%.2f GHz (dependent adds), %.2f maddubs/cycle, int8 peak %.1f GMAC/s/core (%s)\n", hz / 1e9,
                maddubs / hz, macs / 1e9, target.c_str());
#else
    macs = hz * 16;  // NEON sdot: 16 MACs per instruction, 1 per cycle assumed
#endif
    return macs;
  }();
  return peak;
}

struct Matrix {
  std::vector<uint8_t> bytes;
  MatrixView view;
};

// A quantized matrix of about `megabytes` MB with kCols columns (cached per config).
const Matrix& GetMatrix(DType type, int64_t megabytes) {
  static std::vector<std::pair<std::pair<int, int64_t>, Matrix*>> cache;
  for (auto& [key, m] : cache) {
    if (key.first == static_cast<int>(type) && key.second == megabytes) return *m;
  }
  auto* m = new Matrix;
  const size_t row_bytes = RowBytes(type, kCols);
  const int64_t rows = megabytes * 1000 * 1000 / static_cast<int64_t>(row_bytes);
  m->bytes.resize(row_bytes * rows);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> row(kCols);
  // Quantizing every row is slow for K-quants: quantize 64 distinct rows and tile them.
  const int64_t distinct = std::min<int64_t>(rows, 64);
  for (int64_t r = 0; r < distinct; ++r) {
    for (float& v : row) v = dist(rng);
    QuantizeRow(type, row.data(), kCols, m->bytes.data() + r * row_bytes);
  }
  for (int64_t r = distinct; r < rows; ++r) {
    std::copy_n(m->bytes.data() + (r % distinct) * row_bytes, row_bytes, m->bytes.data() + r * row_bytes);
  }
  m->view = MakeMatrixView(type, m->bytes.data(), rows, kCols);
  cache.push_back({{static_cast<int>(type), megabytes}, m});
  return *m;
}

std::vector<float> Activations(int64_t width) {
  std::mt19937 rng(2);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(width * kCols));
  for (float& v : x) v = dist(rng);
  return x;
}

void BM_Decode(benchmark::State& state, DType type) {
  const Matrix& m = GetMatrix(type, state.range(0));
  const std::vector<float> x = Activations(1);
  std::vector<float> y(static_cast<size_t>(m.view.rows));
  const Bandwidth bw = MeasuredBandwidth();
  const CallTime t = TimeLoop(state, [&] { MatMul(m.view, x.data(), kCols, 1, y.data(), m.view.rows, Pool()); });
  const double bytes = static_cast<double>(m.bytes.size());
  state.counters["GB/s"] = bytes / t.wall / 1e9;
  state.counters["of_bw"] = bytes / t.wall / bw.wall;
  state.counters["GB/s_cpu"] = bytes / t.cpu / 1e9;
  state.counters["of_bw_cpu"] = bytes / t.cpu / bw.cpu;
}

// Time per call at width 1 for the 64 MB matrix of `type` (median of 9).
CallTime WidthOneTime(DType type) {
  static CallTime cached[64] = {};
  CallTime& s = cached[static_cast<int>(type)];
  if (s.wall == 0) {
    const Matrix& m = GetMatrix(type, 64);
    const std::vector<float> x = Activations(1);
    std::vector<float> y(static_cast<size_t>(m.view.rows));
    std::vector<double> wall, cpu;
    for (int i = 0; i < 9; ++i) {
      const double cpu0 = ProcessCpuSeconds();
      Stopwatch sw;
      MatMul(m.view, x.data(), kCols, 1, y.data(), m.view.rows, Pool());
      wall.push_back(sw.Seconds());
      cpu.push_back((ProcessCpuSeconds() - cpu0) / kThreads);
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    s = CallTime{wall[4], cpu[4]};
  }
  return s;
}

void BM_Width(benchmark::State& state, DType type) {
  const int64_t width = state.range(0);
  const Matrix& m = GetMatrix(type, 64);
  const std::vector<float> x = Activations(width);
  std::vector<float> y(static_cast<size_t>(m.view.rows * width));
  const CallTime w1 = WidthOneTime(type);
  const CallTime t = TimeLoop(state, [&] { MatMul(m.view, x.data(), kCols, width, y.data(), m.view.rows, Pool()); });
  const double macs = static_cast<double>(m.view.rows) * kCols * width;
  state.counters["vs_w1"] = t.wall / w1.wall;
  state.counters["vs_w1_cpu"] = t.cpu / w1.cpu;
  state.counters["GMAC/s"] = macs / t.wall / 1e9;
  state.counters["GMAC/s_cpu"] = macs / t.cpu / 1e9;
  if (width >= 64) {
    state.counters["of_peak"] = macs / t.wall / (kThreads * PeakMacsPerCore());
    state.counters["of_peak_cpu"] = macs / t.cpu / (kThreads * PeakMacsPerCore());
  }
}

// (c) Thread-pool overhead on decode-sized calls: a 1024 x 1024 matrix (1 MB
//     Q8_0, cache-resident after the first call) at width 1, with the shared
//     2-thread pool ("threads" = 2) and with a 1-thread pool (inline, no
//     wake-up). us_cpu is process CPU time / threads, so the pool's
//     spin-waits count; the wall column is what a decode step sees.
void BM_SmallDecode(benchmark::State& state, DType type) {
  constexpr int64_t kSmall = 1024;
  static std::vector<uint8_t> bytes[64];
  std::vector<uint8_t>& b = bytes[static_cast<int>(type)];
  const size_t row_bytes = RowBytes(type, kSmall);
  if (b.empty()) {
    b.resize(row_bytes * kSmall);
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.0f, 0.02f);
    std::vector<float> row(kSmall);
    for (int64_t r = 0; r < kSmall; ++r) {
      for (float& v : row) v = dist(rng);
      QuantizeRow(type, row.data(), kSmall, b.data() + r * row_bytes);
    }
  }
  const MatrixView view = MakeMatrixView(type, b.data(), kSmall, kSmall);
  static ThreadPool single(1);
  ThreadPool& pool = state.range(0) == 1 ? single : Pool();
  std::vector<float> x(kSmall, 0.5f), y(kSmall);
  for (int64_t c = 0; c < kSmall; ++c) x[c] = static_cast<float>(c % 13) - 6.0f;
  const CallTime t = TimeLoop(state, [&] { MatMul(view, x.data(), kSmall, 1, y.data(), kSmall, pool); });
  state.counters["us"] = t.wall * 1e6;
  // TimeLoop divides CPU time by kThreads; undo that for the 1-thread pool.
  state.counters["us_cpu"] = t.cpu * 1e6 * kThreads / static_cast<double>(state.range(0));
}

BENCHMARK_CAPTURE(BM_Decode, q8_0, DType::kQ8_0)->Arg(32)->Arg(64)->Arg(128)->Arg(256)
    ->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Decode, q4_K, DType::kQ4_K)->Arg(32)->Arg(64)->Arg(128)->Arg(256)
    ->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Width, q8_0, DType::kQ8_0)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(64)->Arg(512)
    ->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_Width, q4_K, DType::kQ4_K)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(64)->Arg(512)
    ->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_SmallDecode, q8_0, DType::kQ8_0)->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_SmallDecode, q4_K, DType::kQ4_K)->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5);

}  // namespace
}  // namespace cairn::kernels

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::printf("MatMul target: %s, threads: %d\n", cairn::kernels::ActiveTargetName().c_str(), cairn::kernels::kThreads);
  cairn::kernels::MeasuredBandwidth();
  cairn::kernels::PeakMacsPerCore();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
