#include "core/profiler.h"

#include <time.h>

#include <chrono>

namespace cairn::prof {
namespace {

struct alignas(64) Slot {
  std::atomic<int64_t> nanos{0};
  std::atomic<int64_t> cpu_nanos{0};
  std::atomic<int64_t> calls{0};
};

Slot g_slots[kNumCategories];

}  // namespace

std::atomic<bool> g_enabled{false};

void SetEnabled(bool enabled) { g_enabled.store(enabled, std::memory_order_relaxed); }

std::string_view CategoryName(Category category) {
  switch (category) {
    case kMatMul: return "matmul";
    case kAttention: return "attention";
    case kRecurrence: return "gated-delta";
    case kConv: return "conv1d";
    case kNormRopeAct: return "norm/rope/act";
    case kEmbedLogits: return "embed/logits";
    case kOther: return "other";
    default: return "?";
  }
}

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void Add(Category category, int64_t nanos, int64_t cpu_nanos) {
  g_slots[category].nanos.fetch_add(nanos, std::memory_order_relaxed);
  g_slots[category].cpu_nanos.fetch_add(cpu_nanos, std::memory_order_relaxed);
  g_slots[category].calls.fetch_add(1, std::memory_order_relaxed);
}

void Reset() {
  for (Slot& slot : g_slots) {
    slot.nanos.store(0, std::memory_order_relaxed);
    slot.cpu_nanos.store(0, std::memory_order_relaxed);
    slot.calls.store(0, std::memory_order_relaxed);
  }
}

Totals Snapshot() {
  Totals totals;
  for (int c = 0; c < kNumCategories; ++c) {
    totals[c].seconds = 1e-9 * static_cast<double>(g_slots[c].nanos.load(std::memory_order_relaxed));
    totals[c].cpu_seconds = 1e-9 * static_cast<double>(g_slots[c].cpu_nanos.load(std::memory_order_relaxed));
    totals[c].calls = g_slots[c].calls.load(std::memory_order_relaxed);
  }
  return totals;
}

double TotalSeconds(const Totals& totals) {
  double sum = 0.0;
  for (const CategoryTotal& t : totals) sum += t.seconds;
  return sum;
}

double TotalCpuSeconds(const Totals& totals) {
  double sum = 0.0;
  for (const CategoryTotal& t : totals) sum += t.cpu_seconds;
  return sum;
}

}  // namespace cairn::prof
