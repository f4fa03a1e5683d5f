// Memory-pressure monitor for the prefix cache.
//
// The cache's byte budget is a static cap; the machine's free memory is not. Other
// processes, a second model, or a container limit can leave far less room than the
// budget assumes, and the kernel's answer to that is the OOM killer. MemoryGuard samples
// the host (/proc/meminfo MemAvailable), this process's cgroup v2 limit (memory.max vs
// memory.current, including limits set on ancestor cgroups) and pressure stall
// information (/proc/pressure/memory), turns each sample into a PressureGrade, and tells
// its owner when the grade changes, so the cache can shed in grades: first shallow rungs
// and superseded checkpoints (kShed), then spill to disk (kSpill), then drop (kDrop).
//
// Reading and classifying are separate pure pieces (parsers, Classify) so they can be
// tested and fuzzed without a loaded machine; PressureSource lets tests inject readings.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace cairn::cache {

// One sample of the machine's memory state. A negative value means unknown (file
// missing, unreadable or malformed) or, for cgroup_max_bytes, unlimited.
struct MemoryReading {
  int64_t mem_total_bytes = -1;       // /proc/meminfo MemTotal, bytes
  int64_t mem_available_bytes = -1;   // /proc/meminfo MemAvailable, bytes
  int64_t cgroup_max_bytes = -1;      // cgroup v2 memory.max of the tightest enclosing cgroup ("max" -> -1)
  int64_t cgroup_current_bytes = -1;  // memory.current of that same cgroup, bytes
  double psi_some_avg10 = -1;         // /proc/pressure/memory "some avg10=", percent of wall time
  double psi_full_avg10 = -1;         // "full avg10=", percent of wall time

  // Fraction in [0, 1] of the tighter limit still free: the smaller of host
  // MemAvailable / MemTotal and cgroup (max - current) / max; -1 when neither is known.
  double AvailableFraction() const;
};

// Ordered: a higher grade sheds more. Escalation may skip grades.
enum class PressureGrade : uint8_t { kNormal = 0, kShed = 1, kSpill = 2, kDrop = 3 };
inline constexpr size_t kPressureGradeCount = 4;

// "normal", "shed", "spill", "drop" ("unknown" for an out-of-range value).
std::string_view ToString(PressureGrade grade);

// A grade is entered when the available fraction drops below its *_available value OR
// PSI rises above its *_psi_* value (some avg10 for shed and spill; full avg10 for drop,
// because "full" means every task stalled on memory at once, the last stop before OOM).
// Values are expected to tighten with the grade (shed > spill > drop for fractions).
struct PressureThresholds {
  double shed_available = 0.15;  // fraction of the tighter limit free
  double spill_available = 0.08;
  double drop_available = 0.04;
  double shed_psi_some = 10;  // percent
  double spill_psi_some = 25;
  double drop_psi_full = 20;
  // A grade is left only when the fraction is at least this far above its entry
  // threshold AND PSI is at or below 0.8x its entry threshold, so a reading hovering at
  // a threshold does not flap between shedding and not shedding every poll.
  double hysteresis = 0.02;
};

// Pure: the grade for `reading` given the grade of the previous poll. Escalation is
// immediate (normal -> drop in one call); de-escalation moves down at most one grade per
// call and only past the hysteresis margin. Unknown values never raise the grade.
PressureGrade Classify(const MemoryReading& reading, const PressureThresholds& thresholds,
                       PressureGrade previous);

// Parsers of the kernel's text files. Tolerant of any bytes: they never throw and never
// read out of bounds. Null output pointers are allowed (that field is skipped).
//
// /proc/meminfo: MemTotal and MemAvailable ("kB" there means KiB) -> bytes. A missing or
// malformed field is set to -1. True when both were found.
bool ParseMeminfo(std::string_view text, int64_t* total_bytes, int64_t* available_bytes);
// cgroup v2 memory.max / memory.current: "max\n" -> -1, "12345\n" -> 12345, else -1.
int64_t ParseCgroupBytes(std::string_view text);
// /proc/pressure/memory: avg10 of the "some" and "full" lines, percent in [0, 100].
// A missing or malformed line is set to -1. True when both were found.
bool ParsePsiMemory(std::string_view text, double* some_avg10, double* full_avg10);
// /proc/self/cgroup: the path of the cgroup v2 line "0::/path" -> "/path"; "" when there
// is none (pure cgroup v1) or it is not an absolute path without ".." components (e.g. a
// cgroup outside this process's cgroup namespace, whose files cannot be reached).
std::string CgroupV2Path(std::string_view proc_self_cgroup);

// Where readings come from; tests inject their own.
class PressureSource {
 public:
  virtual ~PressureSource() = default;
  virtual MemoryReading Read() = 0;
};

// Reads the real files. Roots are parameters so tests can point them at fixture trees:
// proc_root/meminfo, proc_root/pressure/memory, proc_root/self/cgroup, and
// cgroup_root/<path>/memory.{max,current} (or cgroup_root/unified/<path>/... on a hybrid
// v1/v2 host). Walks from the process's cgroup up to the root and reports the level with
// the least headroom (max - current), since a limit on a parent binds its children too.
class SystemPressureSource : public PressureSource {
 public:
  explicit SystemPressureSource(std::string proc_root = "/proc", std::string cgroup_root = "/sys/fs/cgroup");
  // Never throws; a missing or malformed file leaves its fields unknown.
  MemoryReading Read() override;

 private:
  void ReadCgroup(MemoryReading* reading) const;

  std::string proc_root_;
  std::string cgroup_root_;
};

// Polls a source on a background thread and calls on_change when the grade changes.
// Thread-safe. Polls (thread or Poll()) are serialized, so on_change calls arrive in
// order with consistent from/to. on_change runs without the state lock held, so it may
// call grade(), last_reading() and transitions(), but must not call Poll(), Start() or
// Stop() (a poll is in progress on its own thread). An exception thrown by the source or
// by on_change on the polling thread is logged and polling continues.
class MemoryGuard {
 public:
  using OnChange = std::function<void(PressureGrade from, PressureGrade to, const MemoryReading&)>;

  // interval: time between polls of the background thread (clamped to >= 1 ms).
  MemoryGuard(std::unique_ptr<PressureSource> source, PressureThresholds thresholds,
              std::chrono::milliseconds interval, OnChange on_change);
  ~MemoryGuard();  // stops and joins the thread
  MemoryGuard(const MemoryGuard&) = delete;
  MemoryGuard& operator=(const MemoryGuard&) = delete;

  // Starts the polling thread, which polls at once and then every interval.
  // Idempotent; may be called again after Stop().
  void Start();
  // Wakes the thread and joins it; returns within one poll, not one interval.
  void Stop();
  // One synchronous poll: read, classify, record, notify. Returns the new grade.
  PressureGrade Poll();

  PressureGrade grade() const;
  MemoryReading last_reading() const;
  // How many times `to` was entered (the initial kNormal is not counted).
  uint64_t transitions(PressureGrade to) const;

 private:
  void Run();

  const std::unique_ptr<PressureSource> source_;
  const PressureThresholds thresholds_;
  const std::chrono::milliseconds interval_;
  const OnChange on_change_;

  std::mutex poll_mutex_;       // serializes Poll(): source Read + on_change order
  mutable std::mutex mutex_;    // guards the fields below
  std::condition_variable wake_;  // signalled by Stop()
  bool stop_requested_ = false;
  PressureGrade grade_ = PressureGrade::kNormal;
  MemoryReading last_reading_;
  std::array<uint64_t, kPressureGradeCount> transitions_{};

  std::mutex lifecycle_mutex_;  // serializes Start() / Stop()
  std::thread thread_;
};

}  // namespace cairn::cache
