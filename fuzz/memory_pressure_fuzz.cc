// libFuzzer target: the memory-pressure parsers (/proc/meminfo, cgroup v2 memory.max /
// memory.current, /proc/pressure/memory, /proc/self/cgroup) on arbitrary bytes. They must
// not crash, and every value they return must be in its documented range.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cache/memory_pressure.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cairn::cache;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  int64_t total = 0;
  int64_t available = 0;
  const bool meminfo_ok = ParseMeminfo(text, &total, &available);
  Require(total >= -1 && available >= -1);
  Require(meminfo_ok == (total >= 0 && available >= 0));
  Require(total < 0 || total % 1024 == 0);

  Require(ParseCgroupBytes(text) >= -1);

  double some = 0;
  double full = 0;
  const bool psi_ok = ParsePsiMemory(text, &some, &full);
  Require(some == -1 || (some >= 0 && some <= 100));
  Require(full == -1 || (full >= 0 && full <= 100));
  Require(psi_ok == (some >= 0 && full >= 0));

  const std::string path = CgroupV2Path(text);
  Require(path.empty() || (path.front() == '/' && path.find('\n') == std::string::npos));

  MemoryReading reading;
  reading.mem_total_bytes = total;
  reading.mem_available_bytes = available;
  reading.psi_some_avg10 = some;
  reading.psi_full_avg10 = full;
  const double fraction = reading.AvailableFraction();
  Require(fraction == -1 || (fraction >= 0 && fraction <= 1));
  Classify(reading, PressureThresholds{}, PressureGrade::kDrop);
  return 0;
}
