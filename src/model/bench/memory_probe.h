// Machine probes for `cairn bench`: read memory bandwidth, thread-pool
// fork-join cost, process CPU time, peak RSS and load average.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"

namespace cairn::model::bench {

struct BandwidthResult {
  size_t bytes = 0;              // bytes summed per pass
  int passes = 0;
  double best_gbps = 0.0;        // best pass, wall clock (1e9 bytes / s)
  double median_gbps = 0.0;      // median pass, wall clock
  double cpu_gbps = 0.0;         // all passes: bytes / (process CPU seconds / threads)
};

// A read-bandwidth probe that keeps its buffer, so single passes can be
// interleaved with the work they are compared with (decode steps): both then
// see the same machine. Each pass is a streaming sum over the whole buffer on
// every thread of the pool (contiguous slices). The constructor faults the
// pages in with one untimed pass.
class BandwidthProbe {
 public:
  BandwidthProbe(ThreadPool& pool, size_t bytes);
  ~BandwidthProbe();
  BandwidthProbe(const BandwidthProbe&) = delete;
  BandwidthProbe& operator=(const BandwidthProbe&) = delete;

  // One timed pass: wall seconds, or wall-clock GB/s (1e9 bytes / s).
  double PassSeconds();
  double PassGbps() { return static_cast<double>(bytes()) / 1e9 / PassSeconds(); }
  size_t bytes() const { return buffer_.bytes(); }

 private:
  ThreadPool& pool_;
  AlignedBuffer<uint64_t> buffer_;
  std::vector<uint64_t> sums_;   // one per thread, 64 B apart
};

// Streaming sum over a buffer of `bytes` (>= 1 GB recommended) on every thread
// of `pool` (contiguous slices), `passes` times after one untimed pass that
// faults the pages in. The buffer is freed before returning.
BandwidthResult MeasureReadBandwidth(ThreadPool& pool, size_t bytes, int passes);

// Wall microseconds of one empty ThreadPool::Run section with num_threads()
// tasks (median of `reps`): the fork-join cost each parallel kernel call pays.
double MeasurePoolSectionMicros(ThreadPool& pool, int reps);

double ProcessCpuSeconds();
// Peak resident set size of this process so far (getrusage ru_maxrss), bytes.
size_t PeakRssBytes();
// Involuntary context switches of this process so far (getrusage ru_nivcsw).
int64_t InvoluntaryContextSwitches();
// 1-minute load average (/proc/loadavg), or -1 when unavailable.
double LoadAverage1();

}  // namespace cairn::model::bench
