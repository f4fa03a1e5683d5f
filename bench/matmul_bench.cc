// MatMul throughput (docs/benchmarks.md, "Kernels: matmul and bandwidth").
//
//   build-mm/bench/matmul_bench [--benchmark_filter=...]
//
// (a) Decode, matrix-vector: Q8_0 and Q4_K matrices of 32..256 MB, 2 threads
//     (Q6_K, the K-quant models' output head: 64 MB).
//     Counters: GB/s of weight bytes read, and "of_bw", the fraction of this
//     machine's read bandwidth (measured at startup like bandwidth_bench:
//     streaming sum over 512 MiB with 2 threads). BM_DecodeCompute runs the
//     same kernel on one thread over a cache-resident matrix: the compute
//     ceiling of the decode kernel per core (GB/s), to compare with the
//     bandwidth per core (Q8_0 and every K-quant).
// (b) Widths 1..512 on a 64 MB matrix: "vs_w1" = time per call / time at
//     width 1 (speculative verification wants width 8 <= 2x width 1), and
//     for width >= 64 "GMAC/s" and two fractions of peak on the threads used:
//       of_peak (int8):  peak = threads * maddubs/s * 32 (AVX2) or 64 (AVX-512)
//                        int8 MACs per instruction, maddubs/s measured by a
//                        loop of independent maddubs (best of 7; Zen 3: 2/cycle);
//       of_fma_peak:     peak = threads * FMA/s * 8 F32 lanes (AVX2) or 16,
//                        FMA/s measured the same way (Zen 3: 2/cycle).
//     The issue's prefill target is stated against "the integer-dot-product
//     (VNNI) or FMA peak": on a CPU without VNNI both are printed.
//     BM_VerifyCost alternates width-1 and width-N calls (Q8_0: N = 2, 4, 8,
//     12, 16; Q4_K: 8) on the 64 MB matrix and reports the median of the
//     per-round ratios, which cancels load drift on a shared machine better
//     than two separate benchmarks.
// (c) Thread-pool overhead: a 1024 x 1024 matrix at width 1 with 1 and 2
//     threads (see BM_SmallDecode); MatMul runs products under 2^18 MACs
//     inline (matmul.cc, kMinParallelMacs), so this one is split.
//
// (c2) BM_WidthCompute: one thread, cache-resident ~400 KB matrix of 1024
//     columns, widths 1 (decode), 2..16 (verification) and 64 (prefill):
//     weight GB/s per core (weight bytes / thread CPU time per call) and
//     GMAC/s, for every 32-element block type (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
//     IQ4_NL) and every Q8K-paired type (Q4_K, Q5_K, Q6_K, Q2_K, Q3_K,
//     IQ4_XS): new formats against the existing ones without the
//     memory-bandwidth noise of a shared machine. BM_Decode (64 MB) and
//     BM_DecodeCompute cover the 32-element types and Q2_K / Q3_K / IQ4_XS
//     as well. On Arm these run the NEON kernels (scripts/check-arm-tests.sh
//     runs BM_WidthCompute under qemu: a smoke test, not a timing).
//
// (d) BM_IssueRate: instructions per cycle of the AVX2 operations the Q8_0
//     kernel is made of, alone and in pairs (which ones share ports).
//
// After the benchmarks a summary prints each target ratio of the issue.
#include <benchmark/benchmark.h>
#include <hwy/targets.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "kernels/row_groups.h"
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
    std::printf("measured read bandwidth (%d threads, 512 MiB): %.2f GB/s wall, %.2f GB/s cpu-normalized\n",
                kThreads, best.wall / 1e9, best.cpu / 1e9);
    return best;
  }();
  return bw;
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) double MaddubsPerSecond() {
  // Eight independent chains in named registers (latency 3-4 cycles each, so
  // 8 chains cover 2 ops/cycle); the empty asm keeps the compiler from
  // folding or spilling them.
  __m256i a0 = _mm256_set1_epi8(1), a1 = _mm256_set1_epi8(2), a2 = _mm256_set1_epi8(3),
          a3 = _mm256_set1_epi8(4);
  __m256i a4 = _mm256_set1_epi8(5), a5 = _mm256_set1_epi8(6), a6 = _mm256_set1_epi8(7),
          a7 = _mm256_set1_epi8(8);
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
    for (int64_t i = 0; i < iters; ++i) {
#if defined(__x86_64__)
      __asm__ volatile("add $1, %0" : "+r"(v));
#elif defined(__aarch64__)
      __asm__ volatile("add %0, %0, #1" : "+r"(v));
#else
      __asm__ volatile("" : "+r"(v));
      ++v;
#endif
    }
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
    std::printf("clock ~%.2f GHz (dependent adds), %.2f maddubs/cycle, int8 peak %.1f GMAC/s/core (%s)\n",
                hz / 1e9, maddubs / hz, macs / 1e9, target.c_str());
#else
    macs = hz * 16;        // NEON sdot: 16 MACs per instruction, 1 per cycle assumed
#endif
    return macs;
  }();
  return peak;
}

#if defined(__x86_64__)
// Independent vfmadd231ps per second (same structure as MaddubsPerSecond).
__attribute__((target("avx2,fma"))) double FmaPerSecond() {
  __m256 a0 = _mm256_set1_ps(1), a1 = _mm256_set1_ps(2), a2 = _mm256_set1_ps(3), a3 = _mm256_set1_ps(4);
  __m256 a4 = _mm256_set1_ps(5), a5 = _mm256_set1_ps(6), a6 = _mm256_set1_ps(7), a7 = _mm256_set1_ps(8);
  const __m256 m = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
  const int64_t iters = 5'000'000;
  double best = 0;
  for (int rep = 0; rep < 7; ++rep) {
    const double t0 = ThreadCpuSeconds();
    for (int64_t n = 0; n < iters; ++n) {
      a0 = _mm256_fmadd_ps(a0, m, c);
      a1 = _mm256_fmadd_ps(a1, m, c);
      a2 = _mm256_fmadd_ps(a2, m, c);
      a3 = _mm256_fmadd_ps(a3, m, c);
      a4 = _mm256_fmadd_ps(a4, m, c);
      a5 = _mm256_fmadd_ps(a5, m, c);
      a6 = _mm256_fmadd_ps(a6, m, c);
      a7 = _mm256_fmadd_ps(a7, m, c);
      __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), "+x"(a7));
    }
    best = std::max(best, 8.0 * iters / (ThreadCpuSeconds() - t0));
  }
  const __m256 all = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                   _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  benchmark::DoNotOptimize(all);
  return best;
}
#endif

// F32 multiply-accumulates per second per core (FMA peak) for the active target.
double FmaPeakPerCore() {
  static const double peak = [] {
#if defined(__x86_64__)
    const std::string target = ActiveTargetName();
    const double lanes = (target == "AVX3" || target == "AVX3_DL") ? 16 : 8;
    const double fma = FmaPerSecond();
    std::printf("%.2f G FMA/s, F32 FMA peak %.1f GMAC/s/core (%s)\n", fma / 1e9, fma * lanes / 1e9,
                target.c_str());
    return fma * lanes;
#else
    return ClockHz() * 8;  // NEON: two 4-lane FMAs per cycle assumed
#endif
  }();
  return peak;
}

std::string TypeName(DType type) { return std::string(GetDTypeInfo(type).name); }

#if defined(__x86_64__)
// Issue rate of one AVX2 instruction (or an alternating pair): 12 independent
// chains, so even 4-cycle latencies leave 3 ops per cycle in flight. Used in
// docs/kernels-matmul.md to show which operations share execution ports.
enum class IssueOp {
  kMaddubs,
  kMadd,
  kSign,
  kFma,
  kCvt,
  kHadd,
  kAdd,
  kMaddubsSign,
  kMaddubsFma,
  kMaddubsCvt
};

template <IssueOp kOp>
__attribute__((target("avx2,fma"), always_inline)) inline __m256i IssueStep(int chain, __m256i a) {
  const __m256i x = _mm256_set1_epi8(3), ones = _mm256_set1_epi16(1);
  const __m256 m = _mm256_set1_ps(0.999f);
  const bool odd = chain & 1;
  if constexpr (kOp == IssueOp::kMaddubs) return _mm256_maddubs_epi16(a, x);
  if constexpr (kOp == IssueOp::kMadd) return _mm256_madd_epi16(a, ones);
  if constexpr (kOp == IssueOp::kSign) return _mm256_sign_epi8(a, x);
  if constexpr (kOp == IssueOp::kFma)
    return _mm256_castps_si256(_mm256_fmadd_ps(_mm256_castsi256_ps(a), m, m));
  if constexpr (kOp == IssueOp::kCvt) return _mm256_castps_si256(_mm256_cvtepi32_ps(a));
  if constexpr (kOp == IssueOp::kHadd) return _mm256_hadd_epi32(a, x);
  if constexpr (kOp == IssueOp::kAdd) return _mm256_add_epi32(a, x);
  if constexpr (kOp == IssueOp::kMaddubsSign)
    return odd ? _mm256_sign_epi8(a, x) : _mm256_maddubs_epi16(a, x);
  if constexpr (kOp == IssueOp::kMaddubsFma) {
    return odd ? _mm256_castps_si256(_mm256_fmadd_ps(_mm256_castsi256_ps(a), m, m))
               : _mm256_maddubs_epi16(a, x);
  }
  if constexpr (kOp == IssueOp::kMaddubsCvt)
    return odd ? _mm256_castps_si256(_mm256_cvtepi32_ps(a)) : _mm256_maddubs_epi16(a, x);
  return a;
}

// Best of 5 runs of 1M x 12 operations, in operations per second.
template <IssueOp kOp>
__attribute__((target("avx2,fma"), noinline)) double IssuePerSecond() {
  __m256i c0 = _mm256_set1_epi8(1), c1 = _mm256_set1_epi8(2), c2 = _mm256_set1_epi8(3),
          c3 = _mm256_set1_epi8(4);
  __m256i c4 = _mm256_set1_epi8(5), c5 = _mm256_set1_epi8(6), c6 = _mm256_set1_epi8(7),
          c7 = _mm256_set1_epi8(8);
  __m256i c8 = _mm256_set1_epi8(9), c9 = _mm256_set1_epi8(10), c10 = _mm256_set1_epi8(11),
          c11 = _mm256_set1_epi8(12);
  constexpr int64_t kIters = 1'000'000;
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = ThreadCpuSeconds();
    for (int64_t n = 0; n < kIters; ++n) {
      c0 = IssueStep<kOp>(0, c0), c1 = IssueStep<kOp>(1, c1), c2 = IssueStep<kOp>(2, c2),
      c3 = IssueStep<kOp>(3, c3);
      c4 = IssueStep<kOp>(4, c4), c5 = IssueStep<kOp>(5, c5), c6 = IssueStep<kOp>(6, c6),
      c7 = IssueStep<kOp>(7, c7);
      c8 = IssueStep<kOp>(8, c8), c9 = IssueStep<kOp>(9, c9), c10 = IssueStep<kOp>(10, c10),
      c11 = IssueStep<kOp>(11, c11);
      __asm__ volatile(""
                       : "+x"(c0), "+x"(c1), "+x"(c2), "+x"(c3), "+x"(c4), "+x"(c5), "+x"(c6), "+x"(c7),
                         "+x"(c8), "+x"(c9), "+x"(c10), "+x"(c11));
    }
    best = std::max(best, 12.0 * kIters / (ThreadCpuSeconds() - t0));
  }
  __m256i all = _mm256_xor_si256(_mm256_xor_si256(c0, c1), _mm256_xor_si256(c2, c3));
  all = _mm256_xor_si256(all, _mm256_xor_si256(_mm256_xor_si256(c4, c5), _mm256_xor_si256(c6, c7)));
  all = _mm256_xor_si256(all, _mm256_xor_si256(_mm256_xor_si256(c8, c9), _mm256_xor_si256(c10, c11)));
  benchmark::DoNotOptimize(all);
  return best;
}

template <IssueOp kOp>
void BM_IssueRate(benchmark::State& state) {
  double rate = 0;
  for (auto _ : state) rate = IssuePerSecond<kOp>();
  static const double hz = ClockHz();
  state.counters["per_cycle"] = rate / hz;
}
#endif

// Target ratios collected while the benchmarks run, printed by PrintSummary.
std::map<std::string, double>& Summary() {
  static std::map<std::string, double> summary;
  return summary;
}

struct Matrix {
  std::vector<uint8_t> bytes;
  MatrixView view;
};

// A quantized matrix of about `megabytes` MB with `cols` columns (cached per config).
const Matrix& GetMatrix(DType type, int64_t megabytes, int64_t cols = kCols) {
  static std::vector<std::pair<std::tuple<int, int64_t, int64_t>, Matrix*>> cache;
  for (auto& [key, m] : cache) {
    if (key == std::tuple<int, int64_t, int64_t>(static_cast<int>(type), megabytes, cols)) return *m;
  }
  auto* m = new Matrix;
  const size_t row_bytes = RowBytes(type, cols);
  // megabytes == 0: ~400 KB (L2-resident, BM_DecodeCompute).
  const int64_t bytes = megabytes == 0 ? 400 * 1000 : megabytes * 1000 * 1000;
  const int64_t rows = bytes / static_cast<int64_t>(row_bytes);
  m->bytes.resize(row_bytes * rows);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> row(cols);
  // Quantizing every row is slow for K-quants: quantize 64 distinct rows and tile them.
  const int64_t distinct = std::min<int64_t>(rows, 64);
  for (int64_t r = 0; r < distinct; ++r) {
    for (float& v : row) v = dist(rng);
    QuantizeRow(type, row.data(), cols, m->bytes.data() + r * row_bytes);
  }
  for (int64_t r = distinct; r < rows; ++r) {
    std::copy_n(m->bytes.data() + (r % distinct) * row_bytes, row_bytes, m->bytes.data() + r * row_bytes);
  }
  m->view = MakeMatrixView(type, m->bytes.data(), rows, cols);
  cache.push_back({{static_cast<int>(type), megabytes, cols}, m});
  return *m;
}

// The same matrix in the row-group layout (kernels/row_groups.h), its rows
// cut to a multiple of 16.
const Matrix& GetRowGroupMatrix(DType type, int64_t megabytes, int64_t cols = kCols) {
  static std::vector<std::pair<std::tuple<int, int64_t, int64_t>, Matrix*>> cache;
  for (auto& [key, m] : cache) {
    if (key == std::tuple<int, int64_t, int64_t>(static_cast<int>(type), megabytes, cols)) return *m;
  }
  const Matrix& natural = GetMatrix(type, megabytes, cols);
  auto* m = new Matrix;
  const int64_t rows = natural.view.rows / kGroupRows * kGroupRows;
  m->bytes.resize(RowBytes(type, cols) * rows);
  ToRowGroups(type, natural.bytes.data(), natural.view.row_stride_bytes, cols, 0, rows / kGroupRows, m->bytes.data());
  m->view = MakeMatrixView(type, m->bytes.data(), rows, cols);
  m->view.row_groups = true;
  cache.push_back({{static_cast<int>(type), megabytes, cols}, m});
  return *m;
}

std::vector<float> Activations(int64_t width, int64_t cols = kCols) {
  std::mt19937 rng(2);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(width * cols));
  for (float& v : x) v = dist(rng);
  return x;
}

void DecodeCase(benchmark::State& state, DType type, bool row_groups) {
  const Matrix& m = row_groups ? GetRowGroupMatrix(type, state.range(0)) : GetMatrix(type, state.range(0));
  const std::vector<float> x = Activations(1);
  std::vector<float> y(static_cast<size_t>(m.view.rows));
  const Bandwidth bw = MeasuredBandwidth();
  const CallTime t =
      TimeLoop(state, [&] { MatMul(m.view, x.data(), kCols, 1, y.data(), m.view.rows, Pool()); });
  const double bytes = static_cast<double>(m.bytes.size());
  state.counters["GB/s"] = bytes / t.wall / 1e9;
  state.counters["of_bw"] = bytes / t.wall / bw.wall;
  state.counters["GB/s_cpu"] = bytes / t.cpu / 1e9;
  state.counters["of_bw_cpu"] = bytes / t.cpu / bw.cpu;
  const std::string key = std::string("decode ") + TypeName(type) + (row_groups ? " row groups " : " ") +
                          std::to_string(state.range(0)) + " MB";
  Summary()[key + " of_bw"] = bytes / t.wall / bw.wall;
  Summary()[key + " of_bw_cpu"] = bytes / t.cpu / bw.cpu;
}

void BM_Decode(benchmark::State& state, DType type) { DecodeCase(state, type, false); }
void BM_DecodeRowGroups(benchmark::State& state, DType type) { DecodeCase(state, type, true); }

// Decode kernel on one thread over a cache-resident matrix (~400 KB x
// state.range(0) columns, inside the 512 KB L2): weight GB/s per core when
// memory is not the limit (thread CPU time, so other processes do not count).
// 4096 columns: long rows; 1024: the rows of most of a 0.6B-1B model's
// matrices and of its output head (K-quants: one 4-super-block step each,
// so per-row costs show).
void BM_DecodeCompute(benchmark::State& state, DType type) {
  const int64_t cols = state.range(0);
  const Matrix& m = GetMatrix(type, 0, cols);
  const std::vector<float> x = Activations(1, cols);
  std::vector<float> y(static_cast<size_t>(m.view.rows));
  static ThreadPool single(1);
  const double t0 = ThreadCpuSeconds();
  for (auto _ : state) {
    MatMul(m.view, x.data(), cols, 1, y.data(), m.view.rows, single);
    benchmark::ClobberMemory();
  }
  const double per_call = (ThreadCpuSeconds() - t0) / static_cast<double>(state.iterations());
  const double gbs = static_cast<double>(m.bytes.size()) / per_call / 1e9;
  state.counters["GB/s_core"] = gbs;
  Summary()[std::string("decode ") + TypeName(type) + " " + std::to_string(cols) + " cols in-cache GB/s per core"] =
      gbs;
}

// One thread, cache-resident matrix of 1024 columns, width state.range(0).
void WidthComputeCase(benchmark::State& state, DType type, bool row_groups) {
  const int64_t cols = 1024, width = state.range(0);
  const Matrix& m = row_groups ? GetRowGroupMatrix(type, 0, cols) : GetMatrix(type, 0, cols);
  const std::vector<float> x = Activations(width, cols);
  std::vector<float> y(static_cast<size_t>(m.view.rows * width));
  static ThreadPool single(1);
  const double t0 = ThreadCpuSeconds();
  for (auto _ : state) {
    MatMul(m.view, x.data(), cols, width, y.data(), m.view.rows, single);
    benchmark::ClobberMemory();
  }
  const double per_call = (ThreadCpuSeconds() - t0) / static_cast<double>(state.iterations());
  const double gbs = static_cast<double>(m.bytes.size()) / per_call / 1e9;
  state.counters["GB/s_core"] = gbs;
  state.counters["GMAC/s_core"] = static_cast<double>(m.view.rows) * cols * width / per_call / 1e9;
  Summary()[std::string("width ") + TypeName(type) + (row_groups ? " row groups " : " ") + std::to_string(width) +
            " in-cache weight GB/s per core"] = gbs;
}

void BM_WidthCompute(benchmark::State& state, DType type) { WidthComputeCase(state, type, false); }
// The row-group layout (Q4_K / Q6_K; row-group kernels on AVX3_DL, natural rows rebuilt elsewhere).
void BM_WidthComputeRowGroups(benchmark::State& state, DType type) { WidthComputeCase(state, type, true); }

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
  const CallTime t =
      TimeLoop(state, [&] { MatMul(m.view, x.data(), kCols, width, y.data(), m.view.rows, Pool()); });
  const double macs = static_cast<double>(m.view.rows) * kCols * width;
  state.counters["vs_w1"] = t.wall / w1.wall;
  state.counters["vs_w1_cpu"] = t.cpu / w1.cpu;
  state.counters["GMAC/s"] = macs / t.wall / 1e9;
  state.counters["GMAC/s_cpu"] = macs / t.cpu / 1e9;
  const std::string key = std::string("width ") + TypeName(type) + " " + std::to_string(width);
  if (width >= 64) {
    state.counters["of_peak"] = macs / t.wall / (kThreads * PeakMacsPerCore());
    state.counters["of_peak_cpu"] = macs / t.cpu / (kThreads * PeakMacsPerCore());
    state.counters["of_fma_peak_cpu"] = macs / t.cpu / (kThreads * FmaPeakPerCore());
    Summary()[key + " GMAC/s_cpu"] = macs / t.cpu / 1e9;
    Summary()[key + " of_int8_peak_cpu"] = macs / t.cpu / (kThreads * PeakMacsPerCore());
    Summary()[key + " of_fma_peak_cpu"] = macs / t.cpu / (kThreads * FmaPeakPerCore());
  } else {
    Summary()[key + " vs_w1_cpu"] = t.cpu / w1.cpu;
  }
}

// Prefill at the matrix shapes of real models: width 512 against a ~16 MB
// matrix of `cols` columns (1536 / 8960: Qwen2.5-1.5B's attention and FFN
// inputs, 896 / 4864: the 0.5B's). An 8-row activation tile of a wide matrix
// no longer fits in L1 next to the weights.
void BM_PrefillCols(benchmark::State& state, DType type) {
  const int64_t cols = state.range(0), width = 512;
  const Matrix& m = GetMatrix(type, 16, cols);
  const std::vector<float> x = Activations(width, cols);
  std::vector<float> y(static_cast<size_t>(m.view.rows * width));
  const CallTime t = TimeLoop(state, [&] { MatMul(m.view, x.data(), cols, width, y.data(), m.view.rows, Pool()); });
  const double macs = static_cast<double>(m.view.rows) * cols * width;
  state.counters["GMAC/s"] = macs / t.wall / 1e9;
  state.counters["GMAC/s_cpu"] = macs / t.cpu / 1e9;
}

// Width N against width 1 on the 64 MB matrix, interleaved: each round times
// one width-1 call and one width-N call back to back (wall and process CPU),
// and the counters are the medians of the per-round ratios.
void BM_VerifyCost(benchmark::State& state, DType type) {
  const int64_t width = state.range(0);
  const Matrix& m = GetMatrix(type, 64);
  const std::vector<float> x = Activations(width);
  std::vector<float> y(static_cast<size_t>(m.view.rows * width));
  std::vector<double> wall, cpu;
  for (auto _ : state) {
    double wall_t[2], cpu_t[2];
    for (int i = 0; i < 2; ++i) {
      const int64_t n = i == 0 ? 1 : width;
      const double c0 = ProcessCpuSeconds();
      Stopwatch sw;
      MatMul(m.view, x.data(), kCols, n, y.data(), m.view.rows, Pool());
      wall_t[i] = sw.Seconds();
      cpu_t[i] = ProcessCpuSeconds() - c0;
    }
    wall.push_back(wall_t[1] / wall_t[0]);
    cpu.push_back(cpu_t[1] / cpu_t[0]);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  state.counters["ratio"] = wall[wall.size() / 2];
  state.counters["ratio_cpu"] = cpu[cpu.size() / 2];
  const std::string key = std::string("width ") + TypeName(type) + " " + std::to_string(width) + " / width 1";
  Summary()[key + " (interleaved, wall)"] = wall[wall.size() / 2];
  Summary()[key + " (interleaved, cpu)"] = cpu[cpu.size() / 2];
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

BENCHMARK_CAPTURE(BM_Decode, q8_0, DType::kQ8_0)
    ->Arg(32)
    ->Arg(64)
    ->Arg(128)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Decode, q4_K, DType::kQ4_K)
    ->Arg(32)
    ->Arg(64)
    ->Arg(128)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Decode, q6_K, DType::kQ6_K)
    ->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_DecodeRowGroups, q4_K, DType::kQ4_K)
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_DecodeRowGroups, q6_K, DType::kQ6_K)
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, q4_K, DType::kQ4_K)
    ->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, q8_0, DType::kQ8_0)
    ->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, q5_0, DType::kQ5_0)
    ->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, q4_0, DType::kQ4_0)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, q4_1, DType::kQ4_1)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, q5_1, DType::kQ5_1)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, iq4_nl, DType::kIQ4_NL)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, q2_K, DType::kQ2_K)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, q3_K, DType::kQ3_K)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, iq4_xs, DType::kIQ4_XS)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, q5_K, DType::kQ5_K)
    ->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_WidthComputeRowGroups, q6_K, DType::kQ6_K)
    ->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond)->MinTime(0.3);
BENCHMARK_CAPTURE(BM_Width, q8_0, DType::kQ8_0)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(12)
    ->Arg(16)
    ->Arg(64)
    ->Arg(512)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);
BENCHMARK_CAPTURE(BM_Width, q4_K, DType::kQ4_K)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(16)
    ->Arg(64)
    ->Arg(512)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);
BENCHMARK_CAPTURE(BM_PrefillCols, q4_K, DType::kQ4_K)
    ->Arg(1536)
    ->Arg(8960)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);
BENCHMARK_CAPTURE(BM_PrefillCols, q6_K, DType::kQ6_K)
    ->Arg(1536)
    ->Arg(8960)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);
BENCHMARK_CAPTURE(BM_PrefillCols, q8_0, DType::kQ8_0)
    ->Arg(896)
    ->Arg(1536)
    ->Arg(4864)
    ->Arg(8960)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);
BENCHMARK_CAPTURE(BM_PrefillCols, q5_0, DType::kQ5_0)
    ->Arg(896)
    ->Arg(4864)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);
#if defined(__x86_64__)
BENCHMARK(BM_IssueRate<IssueOp::kMaddubs>)->Iterations(1)->Name("BM_IssueRate/maddubs");
BENCHMARK(BM_IssueRate<IssueOp::kMadd>)->Iterations(1)->Name("BM_IssueRate/madd");
BENCHMARK(BM_IssueRate<IssueOp::kSign>)->Iterations(1)->Name("BM_IssueRate/sign");
BENCHMARK(BM_IssueRate<IssueOp::kFma>)->Iterations(1)->Name("BM_IssueRate/fma");
BENCHMARK(BM_IssueRate<IssueOp::kCvt>)->Iterations(1)->Name("BM_IssueRate/cvt");
BENCHMARK(BM_IssueRate<IssueOp::kHadd>)->Iterations(1)->Name("BM_IssueRate/hadd");
BENCHMARK(BM_IssueRate<IssueOp::kAdd>)->Iterations(1)->Name("BM_IssueRate/add");
BENCHMARK(BM_IssueRate<IssueOp::kMaddubsSign>)->Iterations(1)->Name("BM_IssueRate/maddubs+sign");
BENCHMARK(BM_IssueRate<IssueOp::kMaddubsFma>)->Iterations(1)->Name("BM_IssueRate/maddubs+fma");
BENCHMARK(BM_IssueRate<IssueOp::kMaddubsCvt>)->Iterations(1)->Name("BM_IssueRate/maddubs+cvt");
#endif
#define CAIRN_WIDTH_COMPUTE(name, type) \
  BENCHMARK_CAPTURE(BM_WidthCompute, name, type)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(64) \
      ->Unit(benchmark::kMicrosecond)->MinTime(0.3)
CAIRN_WIDTH_COMPUTE(q8_0, DType::kQ8_0);
CAIRN_WIDTH_COMPUTE(q4_0, DType::kQ4_0);
CAIRN_WIDTH_COMPUTE(q4_1, DType::kQ4_1);
CAIRN_WIDTH_COMPUTE(q5_0, DType::kQ5_0);
CAIRN_WIDTH_COMPUTE(q5_1, DType::kQ5_1);
CAIRN_WIDTH_COMPUTE(iq4_nl, DType::kIQ4_NL);
CAIRN_WIDTH_COMPUTE(q4_K, DType::kQ4_K);
CAIRN_WIDTH_COMPUTE(q5_K, DType::kQ5_K);
CAIRN_WIDTH_COMPUTE(q6_K, DType::kQ6_K);
CAIRN_WIDTH_COMPUTE(q2_K, DType::kQ2_K);
CAIRN_WIDTH_COMPUTE(q3_K, DType::kQ3_K);
CAIRN_WIDTH_COMPUTE(iq4_xs, DType::kIQ4_XS);
BENCHMARK_CAPTURE(BM_Decode, q4_0, DType::kQ4_0)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Decode, q4_1, DType::kQ4_1)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Decode, q5_0, DType::kQ5_0)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Decode, q5_1, DType::kQ5_1)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Decode, iq4_nl, DType::kIQ4_NL)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Decode, q5_K, DType::kQ5_K)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Decode, q2_K, DType::kQ2_K)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Decode, q3_K, DType::kQ3_K)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Decode, iq4_xs, DType::kIQ4_XS)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_DecodeCompute, q8_0, DType::kQ8_0)->Arg(4096)->Arg(1024)->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_DecodeCompute, q4_K, DType::kQ4_K)->Arg(4096)->Arg(1024)->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_DecodeCompute, q5_K, DType::kQ5_K)->Arg(4096)->Arg(1024)->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_DecodeCompute, q6_K, DType::kQ6_K)->Arg(4096)->Arg(1024)->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_DecodeCompute, q2_K, DType::kQ2_K)->Arg(4096)->Arg(1024)->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_DecodeCompute, q3_K, DType::kQ3_K)->Arg(4096)->Arg(1024)->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_DecodeCompute, iq4_xs, DType::kIQ4_XS)->Arg(4096)->Arg(1024)->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_VerifyCost, q8_0, DType::kQ8_0)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(12)
    ->Arg(16)
    ->Iterations(41)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_VerifyCost, q4_K, DType::kQ4_K)
    ->Arg(8)
    ->Iterations(41)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SmallDecode, q8_0, DType::kQ8_0)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(0.5);
BENCHMARK_CAPTURE(BM_SmallDecode, q4_K, DType::kQ4_K)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(0.5);

// The issue's targets, from whatever benchmarks ran (filters may skip some).
void PrintSummary() {
  if (Summary().empty()) return;
  std::printf("\nSummary (targets: decode of_bw >= 0.80; width 8 / width 1 <= 2; prefill >= 0.50 of peak)\n");
  for (const auto& [key, value] : Summary()) std::printf("  %-58s %8.3f\n", key.c_str(), value);
}

}  // namespace
}  // namespace cairn::kernels

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  // CAIRN_BENCH_TARGET=AVX2 (or AVX3, ...): time a lower target's kernels on
  // this CPU (e.g. the AVX2 code on an AVX-512 machine; not a substitute for
  // an AVX2-only CPU, whose cores differ).
  if (const char* want = std::getenv("CAIRN_BENCH_TARGET"); want != nullptr) {
    for (int i = 0; i < 63; ++i) {
      const int64_t bit = int64_t{1} << i;
      if ((HWY_TARGETS & bit) != 0 && std::string(hwy::TargetName(bit)) == want) {
        hwy::SetSupportedTargetsForTest(bit);
      }
    }
  }
  std::printf("MatMul target: %s, threads: %d\n", cairn::kernels::ActiveTargetName().c_str(),
              cairn::kernels::kThreads);
  // The machine's read bandwidth and peaks (a 512 MiB stream, timed loops)
  // are measured before the benchmarks that report fractions of them;
  // CAIRN_BENCH_NO_CALIBRATION=1 leaves them to the first benchmark that
  // needs them (e.g. a filtered BM_WidthCompute run under qemu, where the
  // calibration alone takes minutes).
  const char* no_calibration = std::getenv("CAIRN_BENCH_NO_CALIBRATION");
  if (no_calibration == nullptr || no_calibration[0] != '1') {
    cairn::kernels::MeasuredBandwidth();
    cairn::kernels::PeakMacsPerCore();
    cairn::kernels::FmaPeakPerCore();
  }
  benchmark::RunSpecifiedBenchmarks();
  cairn::kernels::PrintSummary();
  benchmark::Shutdown();
  return 0;
}
