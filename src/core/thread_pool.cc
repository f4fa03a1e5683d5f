#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define CAIRN_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define CAIRN_CPU_RELAX() asm volatile("yield")
#else
#define CAIRN_CPU_RELAX() ((void)0)
#endif

namespace cairn {

int ThreadPool::DefaultThreadCount() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  workers_.reserve(num_threads_ - 1);
  for (int i = 1; i < num_threads_; ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
  }
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  epoch_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::DrainTasks(int thread_idx) {
  for (;;) {
    const int64_t task = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (task >= num_tasks_) return;
    (*job_)(task, thread_idx);
  }
}

void ThreadPool::WorkerLoop(int thread_idx) {
  uint64_t seen = 0;
  for (;;) {
    // Spin briefly for the next section, then sleep until the epoch changes.
    uint64_t epoch = epoch_.load(std::memory_order_acquire);
    if (epoch == seen) {
      const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
      int iter = 0;
      while ((epoch = epoch_.load(std::memory_order_acquire)) == seen) {
        CAIRN_CPU_RELAX();
        if ((++iter & 63) == 0 && std::chrono::steady_clock::now() > spin_until) {
          // seq_cst on both sides (here and in Run) makes the sleeping count and
          // the epoch a Dekker pair: either Run sees us asleep and notifies, or
          // wait() sees the new epoch and returns at once.
          workers_sleeping_.fetch_add(1);
          epoch_.wait(seen);
          workers_sleeping_.fetch_sub(1);
        }
      }
    }
    seen = epoch;
    if (stop_.load(std::memory_order_acquire)) return;
    // Join the section only while it is open. Registering first and then
    // checking (both seq_cst, mirrored in Run) means either Run's wait sees
    // this worker in active_, or this worker sees the section closed and
    // leaves job_ alone: a worker the OS had descheduled never holds up a
    // section it did not start (the caller has done all its tasks meanwhile).
    active_.fetch_add(1);
    if (open_epoch_.load() == epoch) DrainTasks(thread_idx);
    active_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::Run(int64_t num_tasks, FunctionRef<void(int64_t, int)> fn) {
  if (num_tasks <= 0) return;
  if (num_threads_ == 1 || num_tasks == 1) {
    for (int64_t t = 0; t < num_tasks; ++t) fn(t, 0);
    return;
  }
  job_ = &fn;
  num_tasks_ = num_tasks;
  next_task_.store(0, std::memory_order_relaxed);
  const uint64_t epoch = epoch_.load(std::memory_order_relaxed) + 1;
  open_epoch_.store(epoch);
  epoch_.store(epoch);
  if (workers_sleeping_.load() > 0) epoch_.notify_all();
  DrainTasks(0);
  // Every task is claimed. Close the section, then wait only for the workers
  // that joined it (each finishes the task it holds, if any).
  open_epoch_.store(0);
  while (active_.load() != 0) CAIRN_CPU_RELAX();
  job_ = nullptr;
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             FunctionRef<void(int64_t, int64_t, int)> fn, int chunks_per_thread) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t units = (n + grain - 1) / grain;
  const int64_t chunks = std::min<int64_t>(units, static_cast<int64_t>(num_threads_) * std::max(1, chunks_per_thread));
  const int64_t units_per_chunk = (units + chunks - 1) / chunks;
  const int64_t num_chunks = (units + units_per_chunk - 1) / units_per_chunk;
  Run(num_chunks, [&](int64_t chunk, int thread_idx) {
    const int64_t begin = chunk * units_per_chunk * grain;
    const int64_t end = std::min(n, begin + units_per_chunk * grain);
    fn(begin, end, thread_idx);
  });
}

}  // namespace cairn

#undef CAIRN_CPU_RELAX
