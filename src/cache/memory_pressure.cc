#include "cache/memory_pressure.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <system_error>
#include <utility>

#include "core/error.h"
#include "core/log.h"

namespace cairn::cache {
namespace {

// Kernel pseudo-files are a few KiB; the cap bounds what a hostile fixture can cost.
constexpr size_t kMaxFileBytes = 64 * 1024;
// Leaving a grade also needs PSI at or below this share of its entry threshold.
constexpr double kPsiHysteresisFactor = 0.8;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Pops the next line (without its '\n') off the front of *rest.
std::string_view NextLine(std::string_view* rest) {
  const size_t end = rest->find('\n');
  const std::string_view line = rest->substr(0, end);
  rest->remove_prefix(end == std::string_view::npos ? rest->size() : end + 1);
  return line;
}

// Pops the next space-separated token off the front of *rest ("" at the end).
std::string_view NextToken(std::string_view* rest) {
  while (!rest->empty() && IsSpace(rest->front())) rest->remove_prefix(1);
  size_t end = 0;
  while (end < rest->size() && !IsSpace((*rest)[end])) ++end;
  const std::string_view token = rest->substr(0, end);
  rest->remove_prefix(end);
  return token;
}

// A whole-string non-negative decimal integer; -1 on anything else (sign, overflow, junk).
int64_t ParseNonNegative(std::string_view s) {
  int64_t value = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value < 0) return -1;
  return value;
}

// A meminfo value field such as "  24683664 kB" -> bytes; -1 when malformed or too large.
int64_t MeminfoBytes(std::string_view field) {
  field = Trim(field);
  if (!field.ends_with("kB")) return -1;
  const int64_t kib = ParseNonNegative(Trim(field.substr(0, field.size() - 2)));
  if (kib < 0 || kib > std::numeric_limits<int64_t>::max() / 1024) return -1;
  return kib * 1024;
}

// The avg10 value of a PSI line's fields ("avg10=1.23 avg60=... total=..."); -1 if absent
// or not a percentage.
double PsiAvg10(std::string_view fields) {
  constexpr std::string_view kKey = "avg10=";
  for (std::string_view token = NextToken(&fields); !token.empty(); token = NextToken(&fields)) {
    if (!token.starts_with(kKey)) continue;
    token.remove_prefix(kKey.size());
    double value = -1;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    const bool whole = !token.empty() && ec == std::errc() && end == token.data() + token.size();
    return whole && std::isfinite(value) && value >= 0 && value <= 100 ? value : -1;
  }
  return -1;
}

bool HasDotDotComponent(std::string_view path) {
  for (std::string_view rest = path; !rest.empty();) {
    const size_t slash = rest.find('/');
    if (rest.substr(0, slash) == "..") return true;
    rest.remove_prefix(slash == std::string_view::npos ? rest.size() : slash + 1);
  }
  return false;
}

// Reads at most kMaxFileBytes of a file. /proc files report size 0, so read to EOF.
bool ReadSmallFile(const std::string& path, std::string* out) {
  out->clear();
  std::FILE* file = std::fopen(path.c_str(), "rbe");  // 'e': O_CLOEXEC
  if (file == nullptr) return false;
  char buffer[4096];
  size_t n = 0;
  while (out->size() < kMaxFileBytes && (n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    out->append(buffer, std::min(n, kMaxFileBytes - out->size()));
  }
  const bool ok = std::ferror(file) == 0;
  std::fclose(file);
  return ok;
}

int64_t ReadCgroupFile(const std::string& path) {
  std::string text;
  return ReadSmallFile(path, &text) ? ParseCgroupBytes(text) : -1;
}

bool FileExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// "/a/b" -> "/a", "/a" -> "/". Only called on paths other than "/".
std::string ParentCgroup(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// One grade's entry rule.
struct GradeRule {
  double available;  // enter below this available fraction
  double psi;        // enter above this PSI avg10 (percent)
  bool psi_full;     // compare against "full" instead of "some"
};

GradeRule RuleFor(PressureGrade grade, const PressureThresholds& t) {
  switch (grade) {
    case PressureGrade::kShed: return {t.shed_available, t.shed_psi_some, false};
    case PressureGrade::kSpill: return {t.spill_available, t.spill_psi_some, false};
    default: return {t.drop_available, t.drop_psi_full, true};
  }
}

// Unknown (negative) values never satisfy a rule, so they never raise the grade.
bool Enters(const GradeRule& rule, double fraction, const MemoryReading& r) {
  const double psi = rule.psi_full ? r.psi_full_avg10 : r.psi_some_avg10;
  return (fraction >= 0 && fraction < rule.available) || (psi >= 0 && psi > rule.psi);
}

bool Holds(const GradeRule& rule, double fraction, const MemoryReading& r, double hysteresis) {
  const double psi = rule.psi_full ? r.psi_full_avg10 : r.psi_some_avg10;
  return (fraction >= 0 && fraction < rule.available + hysteresis) ||
         (psi >= 0 && psi > kPsiHysteresisFactor * rule.psi);
}

PressureGrade Lower(PressureGrade grade) { return static_cast<PressureGrade>(static_cast<uint8_t>(grade) - 1); }

}  // namespace

double MemoryReading::AvailableFraction() const {
  double fraction = -1;
  if (mem_total_bytes > 0 && mem_available_bytes >= 0) {
    fraction = std::clamp(static_cast<double>(mem_available_bytes) / static_cast<double>(mem_total_bytes), 0.0, 1.0);
  }
  if (cgroup_max_bytes > 0 && cgroup_current_bytes >= 0) {
    // current may briefly exceed max while the kernel reclaims: clamp to 0 free.
    const double free = static_cast<double>(cgroup_max_bytes) - static_cast<double>(cgroup_current_bytes);
    const double cgroup = std::clamp(free / static_cast<double>(cgroup_max_bytes), 0.0, 1.0);
    fraction = fraction < 0 ? cgroup : std::min(fraction, cgroup);
  }
  return fraction;
}

std::string_view ToString(PressureGrade grade) {
  switch (grade) {
    case PressureGrade::kNormal: return "normal";
    case PressureGrade::kShed: return "shed";
    case PressureGrade::kSpill: return "spill";
    case PressureGrade::kDrop: return "drop";
  }
  return "unknown";
}

PressureGrade Classify(const MemoryReading& reading, const PressureThresholds& thresholds,
                       PressureGrade previous) {
  previous = std::min(previous, PressureGrade::kDrop);
  const double fraction = reading.AvailableFraction();
  PressureGrade target = PressureGrade::kNormal;
  for (PressureGrade g : {PressureGrade::kDrop, PressureGrade::kSpill, PressureGrade::kShed}) {
    if (Enters(RuleFor(g, thresholds), fraction, reading)) {
      target = g;
      break;
    }
  }
  if (target >= previous) return target;  // escalate at once, or stay
  if (Holds(RuleFor(previous, thresholds), fraction, reading, thresholds.hysteresis)) return previous;
  return Lower(previous);  // one grade per poll: let the cache's shedding show in the next sample
}

bool ParseMeminfo(std::string_view text, int64_t* total_bytes, int64_t* available_bytes) {
  int64_t total = -1;
  int64_t available = -1;
  for (std::string_view rest = text; !rest.empty();) {
    std::string_view line = NextLine(&rest);
    if (total < 0 && line.starts_with("MemTotal:")) total = MeminfoBytes(line.substr(9));
    if (available < 0 && line.starts_with("MemAvailable:")) available = MeminfoBytes(line.substr(13));
  }
  if (total_bytes != nullptr) *total_bytes = total;
  if (available_bytes != nullptr) *available_bytes = available;
  return total >= 0 && available >= 0;
}

int64_t ParseCgroupBytes(std::string_view text) {
  text = Trim(text);
  return text == "max" ? -1 : ParseNonNegative(text);
}

bool ParsePsiMemory(std::string_view text, double* some_avg10, double* full_avg10) {
  double some = -1;
  double full = -1;
  for (std::string_view rest = text; !rest.empty();) {
    std::string_view fields = NextLine(&rest);
    const std::string_view kind = NextToken(&fields);
    if (kind == "some" && some < 0) some = PsiAvg10(fields);
    if (kind == "full" && full < 0) full = PsiAvg10(fields);
  }
  if (some_avg10 != nullptr) *some_avg10 = some;
  if (full_avg10 != nullptr) *full_avg10 = full;
  return some >= 0 && full >= 0;
}

std::string CgroupV2Path(std::string_view proc_self_cgroup) {
  for (std::string_view rest = proc_self_cgroup; !rest.empty();) {
    std::string_view line = NextLine(&rest);
    if (!line.starts_with("0::")) continue;  // v1 lines carry a hierarchy id > 0
    line.remove_prefix(3);
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const bool usable = line.starts_with('/') && line.find('\0') == std::string_view::npos &&
                        !HasDotDotComponent(line);
    return usable ? std::string(line) : std::string();
  }
  return {};
}

SystemPressureSource::SystemPressureSource(std::string proc_root, std::string cgroup_root)
    : proc_root_(std::move(proc_root)), cgroup_root_(std::move(cgroup_root)) {}

MemoryReading SystemPressureSource::Read() {
  MemoryReading reading;
  try {
    std::string text;
    if (ReadSmallFile(proc_root_ + "/meminfo", &text)) {
      ParseMeminfo(text, &reading.mem_total_bytes, &reading.mem_available_bytes);
    }
    if (ReadSmallFile(proc_root_ + "/pressure/memory", &text)) {
      ParsePsiMemory(text, &reading.psi_some_avg10, &reading.psi_full_avg10);
    }
    ReadCgroup(&reading);
  } catch (const std::exception&) {
    // Only allocation can throw here, and that is plausible under the very pressure
    // being measured: return what was read, the rest stays unknown.
  }
  return reading;
}

void SystemPressureSource::ReadCgroup(MemoryReading* reading) const {
  std::string text;
  if (!ReadSmallFile(proc_root_ + "/self/cgroup", &text)) return;
  const std::string path = CgroupV2Path(text);
  if (path.empty()) return;
  // Every v2 cgroup has cgroup.controllers. A hybrid host mounts v2 at <root>/unified.
  std::string base = cgroup_root_;
  const std::string unified = cgroup_root_ + "/unified";
  if (!FileExists(base + path + "/cgroup.controllers") && FileExists(unified + path + "/cgroup.controllers")) {
    base = unified;
  }
  const int64_t own_current = ReadCgroupFile(base + path + "/memory.current");
  int64_t best_headroom = std::numeric_limits<int64_t>::max();
  for (std::string level = path;; level = ParentCgroup(level)) {
    const std::string dir = base + (level == "/" ? "" : level);
    const int64_t max = ReadCgroupFile(dir + "/memory.max");
    const int64_t current = max >= 0 ? ReadCgroupFile(dir + "/memory.current") : -1;
    if (current >= 0 && max - current < best_headroom) {
      best_headroom = max - current;
      reading->cgroup_max_bytes = max;
      reading->cgroup_current_bytes = current;
    }
    if (level == "/") break;
  }
  if (reading->cgroup_max_bytes < 0) reading->cgroup_current_bytes = own_current;
}

MemoryGuard::MemoryGuard(std::unique_ptr<PressureSource> source, PressureThresholds thresholds,
                         std::chrono::milliseconds interval, OnChange on_change)
    : source_(std::move(source)),
      thresholds_(thresholds),
      interval_(std::max(interval, std::chrono::milliseconds(1))),
      on_change_(std::move(on_change)) {
  CAIRN_CHECK(source_ != nullptr);
}

MemoryGuard::~MemoryGuard() { Stop(); }

void MemoryGuard::Start() {
  std::lock_guard<std::mutex> lifecycle(lifecycle_mutex_);
  if (thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = false;
  }
  thread_ = std::thread(&MemoryGuard::Run, this);
}

void MemoryGuard::Stop() {
  std::lock_guard<std::mutex> lifecycle(lifecycle_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

PressureGrade MemoryGuard::Poll() {
  std::lock_guard<std::mutex> poll(poll_mutex_);
  const MemoryReading reading = source_->Read();
  PressureGrade from;
  PressureGrade to;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    from = grade_;
    to = Classify(reading, thresholds_, from);
    grade_ = to;
    last_reading_ = reading;
    if (to != from) ++transitions_[static_cast<size_t>(to)];
  }
  if (to != from && on_change_) on_change_(from, to, reading);
  return to;
}

PressureGrade MemoryGuard::grade() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return grade_;
}

MemoryReading MemoryGuard::last_reading() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_reading_;
}

uint64_t MemoryGuard::transitions(PressureGrade to) const {
  const size_t index = static_cast<size_t>(to);
  std::lock_guard<std::mutex> lock(mutex_);
  return index < transitions_.size() ? transitions_[index] : 0;
}

void MemoryGuard::Run() {
  for (;;) {
    try {
      Poll();
    } catch (const std::exception& e) {
      LogWarn("memory guard: poll failed: {}", e.what());
    } catch (...) {
      LogWarn("memory guard: poll failed with a non-standard exception");
    }
    std::unique_lock<std::mutex> lock(mutex_);
    if (wake_.wait_for(lock, interval_, [this] { return stop_requested_; })) return;
  }
}

}  // namespace cairn::cache
