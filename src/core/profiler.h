// A tiny run-time-enabled profiler: named per-category wall-time accumulators.
//
// Code under measurement opens a scope for the category it belongs to:
//   { prof::Scope scope(prof::kMatMul); kernels::MatMul(...); }
// When profiling is off (the default) a scope costs one relaxed atomic load
// and a branch. When on, it reads the steady clock (~20-50 ns) and the calling
// thread's CPU clock (a syscall, ~0.2-0.5 us) at both ends and adds wall and
// CPU nanoseconds and one call to the category with relaxed atomics (safe
// from any thread; totals from concurrent sequences add up). The CPU time is
// the calling thread's only: with one thread it is the work itself, immune to
// preemption on a shared machine; with a pool it excludes the workers' share.
//
// Scopes are meant for leaf operations: nested scopes would count their time
// twice. Time that no scope covers (residual adds, glue) is what a caller gets
// by subtracting Totals() from its own wall time around the measured region.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

namespace cairn::prof {

enum Category : int {
  kMatMul = 0,     // weight projections inside layers (Project / MatMul)
  kAttention,      // softmax attention over the KV cache
  kRecurrence,     // Gated DeltaNet delta-rule recurrence
  kConv,           // causal depthwise conv1d (GDN)
  kNormRopeAct,    // RMS/L2 norms, RoPE, SwiGLU, sigmoid gates, softplus
  kEmbedLogits,    // embedding lookup, final norm and output head
  kOther,          // KV writes, input binding, other explicitly scoped glue
  kNumCategories,
};

// Short name of a category ("matmul", "attention", ...).
std::string_view CategoryName(Category category);

// Global switch, checked once when a scope opens.
extern std::atomic<bool> g_enabled;
inline bool Enabled() { return g_enabled.load(std::memory_order_relaxed); }
void SetEnabled(bool enabled);

struct CategoryTotal {
  double seconds = 0.0;  // wall seconds summed over scopes
  double cpu_seconds = 0.0;  // calling-thread CPU seconds summed over scopes
  int64_t calls = 0;     // number of scopes closed
};
using Totals = std::array<CategoryTotal, kNumCategories>;

// Adds one closed scope of `nanos` wall and `cpu_nanos` thread-CPU
// nanoseconds to `category`.
void Add(Category category, int64_t nanos, int64_t cpu_nanos);
// Zeroes every category.
void Reset();
// Current totals (a consistent-enough snapshot: each field is read atomically).
Totals Snapshot();
// Sum of wall (or CPU) seconds over all categories.
double TotalSeconds(const Totals& totals);
double TotalCpuSeconds(const Totals& totals);

// Monotonic nanoseconds (steady clock).
int64_t NowNanos();
// CPU nanoseconds consumed by the calling thread.
int64_t ThreadCpuNanos();

class Scope {
 public:
  explicit Scope(Category category)
      : category_(category), start_(Enabled() ? NowNanos() : -1),
        cpu_start_(start_ >= 0 ? ThreadCpuNanos() : 0) {}
  ~Scope() {
    if (start_ >= 0) Add(category_, NowNanos() - start_, ThreadCpuNanos() - cpu_start_);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Category category_;
  int64_t start_;  // -1 when profiling was off at construction
  int64_t cpu_start_;
};

}  // namespace cairn::prof
