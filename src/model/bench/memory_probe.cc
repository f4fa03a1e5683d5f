#include "model/bench/memory_probe.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/timer.h"

namespace cairn::model::bench {
namespace {

// Eight independent accumulators: the loop is bound by loads, not by adds.
uint64_t SumWords(const uint64_t* p, int64_t n) {
  uint64_t s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) s[j] += p[i + j];
  }
  for (; i < n; ++i) s[0] += p[i];
  uint64_t total = 0;
  for (uint64_t v : s) total += v;
  return total;
}

}  // namespace

BandwidthProbe::BandwidthProbe(ThreadPool& pool, size_t bytes)
    : pool_(pool),
      buffer_(bytes / sizeof(uint64_t)),
      sums_(static_cast<size_t>(pool.num_threads()) * 8, 0) {
  pool_.ParallelFor(static_cast<int64_t>(buffer_.size()), 8192, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) buffer_[i] = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
  });
  PassSeconds();   // warm-up
}

BandwidthProbe::~BandwidthProbe() {
  uint64_t checksum = 0;
  for (uint64_t s : sums_) checksum += s;
  if (checksum == 1) std::fputc(' ', stderr);  // keeps the sums observable
}

double BandwidthProbe::PassSeconds() {
  // Grain of 64 KiB keeps every slice page-aligned and large.
  constexpr int64_t kGrainWords = 8192;
  Stopwatch sw;
  pool_.ParallelFor(static_cast<int64_t>(buffer_.size()), kGrainWords, [&](int64_t b, int64_t e, int t) {
    sums_[static_cast<size_t>(t) * 8] += SumWords(buffer_.data() + b, e - b);
  });
  return sw.Seconds();
}

BandwidthResult MeasureReadBandwidth(ThreadPool& pool, size_t bytes, int passes) {
  BandwidthProbe probe(pool, bytes);
  std::vector<double> seconds;
  const double cpu0 = ProcessCpuSeconds();
  for (int p = 0; p < passes; ++p) seconds.push_back(probe.PassSeconds());
  const double cpu = ProcessCpuSeconds() - cpu0;

  BandwidthResult r;
  r.bytes = probe.bytes();
  r.passes = passes;
  std::sort(seconds.begin(), seconds.end());
  const double gb = static_cast<double>(r.bytes) / 1e9;
  r.best_gbps = gb / seconds.front();
  r.median_gbps = gb / seconds[seconds.size() / 2];
  r.cpu_gbps = gb * passes / (cpu / pool.num_threads());
  return r;
}

double MeasurePoolSectionMicros(ThreadPool& pool, int reps) {
  std::vector<double> micros;
  micros.reserve(static_cast<size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    Stopwatch sw;
    pool.Run(pool.num_threads(), [](int64_t, int) {});
    micros.push_back(sw.Seconds() * 1e6);
  }
  std::sort(micros.begin(), micros.end());
  return micros[micros.size() / 2];
}

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

size_t PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<size_t>(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB on Linux
}

int64_t InvoluntaryContextSwitches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_nivcsw;
}

double LoadAverage1() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return -1.0;
  double load = -1.0;
  if (std::fscanf(f, "%lf", &load) != 1) load = -1.0;
  std::fclose(f);
  return load;
}

}  // namespace cairn::model::bench
