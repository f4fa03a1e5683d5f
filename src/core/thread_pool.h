// Persistent, low-latency thread pool for compute kernels.
//
// Decode steps run many sub-millisecond parallel sections per token, so waking
// workers must cost far less than the work: workers spin on an epoch counter for
// a short while after each section (kSpinMicros) before sleeping on a futex
// (std::atomic::wait). The calling thread always takes part in the work.
//
// Determinism: Run() hands out task indices dynamically, but each task owns a
// fixed slice of the output, so results never depend on which thread ran what.
//
// Shared machines: a section ends when its tasks are done, not when every
// worker has checked in. A worker the OS has descheduled (another process on
// its core) does not stall the caller, which claims the remaining tasks
// itself; only a worker holding a task is waited for.
// The pool is passed explicitly to kernels; there is no global pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/function_ref.h"

namespace cairn {

class ThreadPool {
 public:
  // num_threads counts the caller: 1 means everything runs inline.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(task_idx, thread_idx) for every task_idx in [0, num_tasks) and
  // returns when all are done. thread_idx is in [0, num_threads()) and is unique
  // among concurrently running tasks (use it to pick per-thread scratch).
  // Not reentrant: fn must not call Run on the same pool.
  void Run(int64_t num_tasks, FunctionRef<void(int64_t task_idx, int thread_idx)> fn);

  // Splits [0, n) into about num_threads() * chunks_per_thread contiguous
  // ranges, each a multiple of `grain` (except the last), and calls
  // fn(begin, end, thread_idx) for each.
  void ParallelFor(int64_t n, int64_t grain,
                   FunctionRef<void(int64_t begin, int64_t end, int thread_idx)> fn,
                   int chunks_per_thread = 1);

  // Default thread count: the number of online CPUs.
  static int DefaultThreadCount();

 private:
  void WorkerLoop(int thread_idx);
  void DrainTasks(int thread_idx);

  static constexpr int kSpinMicros = 200;

  const int num_threads_;
  std::vector<std::thread> workers_;

  // The current section. Written by the caller before bumping epoch_.
  FunctionRef<void(int64_t, int)>* job_ = nullptr;
  int64_t num_tasks_ = 0;

  // Sections are numbered by epoch_ (bumped by Run to wake workers);
  // open_epoch_ is the number of the section workers may still join (0 once
  // all its tasks are claimed); active_ counts workers inside a section.
  alignas(64) std::atomic<uint64_t> epoch_{0};
  alignas(64) std::atomic<uint64_t> open_epoch_{0};
  alignas(64) std::atomic<int64_t> next_task_{0};
  alignas(64) std::atomic<int> active_{0};
  alignas(64) std::atomic<int> workers_sleeping_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace cairn
