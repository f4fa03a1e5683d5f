// Memory-pressure monitor: kernel-file parsers, SystemPressureSource on fixture trees,
// Classify grades and hysteresis, MemoryGuard with an injected source and its thread.
#include "cache/memory_pressure.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace cairn::cache {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace std::string_literals;

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMiB = int64_t{1} << 20;

// Formats copied from a Linux 6.x host.
constexpr std::string_view kMeminfo =
    "MemTotal:       24683664 kB\n"
    "MemFree:        23154860 kB\n"
    "MemAvailable:   23602452 kB\n"
    "Buffers:            4948 kB\n"
    "Cached:           626068 kB\n"
    "SwapCached:            0 kB\n"
    "VmallocTotal:   34359738367 kB\n"
    "HugePages_Total:       0\n"
    "Hugepagesize:       2048 kB\n"
    "DirectMap1G:    25165824 kB\n";
constexpr std::string_view kPsi =
    "some avg10=0.28 avg60=0.56 avg300=0.62 total=7929001\n"
    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
constexpr std::string_view kHybridCgroup =
    "9:name=systemd:/\n8:pids:/\n7:blkio:/\n4:memory:/process_api/1f47\n1:cpu:/\n0::/\n";

// ---------------------------------------------------------------- ParseMeminfo

TEST(ParseMeminfoTest, RealFileGivesBytes) {
  int64_t total = 0, available = 0;
  EXPECT_TRUE(ParseMeminfo(kMeminfo, &total, &available));
  EXPECT_EQ(total, int64_t{24683664} * 1024);
  EXPECT_EQ(available, int64_t{23602452} * 1024);
}

TEST(ParseMeminfoTest, MissingMemAvailableLeavesItUnknown) {
  // Kernels before 3.14 have no MemAvailable.
  int64_t total = 0, available = 0;
  EXPECT_FALSE(ParseMeminfo("MemTotal:  1000 kB\nMemFree:  900 kB\n", &total, &available));
  EXPECT_EQ(total, 1000 * 1024);
  EXPECT_EQ(available, -1);
}

TEST(ParseMeminfoTest, NullOutputsAndCrlfAndFirstOccurrence) {
  EXPECT_TRUE(ParseMeminfo(kMeminfo, nullptr, nullptr));
  int64_t total = 0, available = 0;
  EXPECT_TRUE(ParseMeminfo("MemTotal: 4 kB\r\nMemAvailable: 2 kB\r\nMemTotal: 8 kB\n", &total, &available));
  EXPECT_EQ(total, 4096);
  EXPECT_EQ(available, 2048);
}

TEST(ParseMeminfoTest, MalformedValuesAreUnknown) {
  const std::vector<std::string> bad = {
      "MemTotal: abc kB",  "MemTotal: -5 kB", "MemTotal: 12 MB",      "MemTotal: 12",
      "MemTotal:  kB",     "MemTotal: 1 2 kB", "MemTotal: 0x10 kB",   "MemTotal: 1.5 kB",
      "MemTotal: 99999999999999999999 kB",     // overflows int64
      "MemTotal: 9007199254740992 kB",         // fits in kB, overflows in bytes
      " XMemTotal: 5 kB",  "memtotal: 5 kB",  "MemTotal 5 kB"};
  for (const std::string& line : bad) {
    int64_t total = 0, available = 0;
    EXPECT_FALSE(ParseMeminfo(line + "\nMemAvailable: 1 kB\n", &total, &available)) << line;
    EXPECT_EQ(total, -1) << line;
    EXPECT_EQ(available, 1024) << line;
  }
}

TEST(ParseMeminfoTest, TruncatedEmptyAndBinaryInput) {
  int64_t total = 0, available = 0;
  // Cut mid-number: "MemAvailable:   2360" without its unit is malformed.
  ASSERT_TRUE(kMeminfo.substr(0, 76).ends_with("MemAvailable:   2360"));
  EXPECT_FALSE(ParseMeminfo(kMeminfo.substr(0, 76), &total, &available));
  EXPECT_EQ(total, int64_t{24683664} * 1024);
  EXPECT_EQ(available, -1);
  EXPECT_FALSE(ParseMeminfo("", &total, &available));
  EXPECT_EQ(total, -1);
  const std::string binary = "\0\xff\x01MemTotal:\0 12 kB\n\x80\x80\n"s;
  EXPECT_FALSE(ParseMeminfo(binary, &total, &available));
  EXPECT_EQ(total, -1);
  EXPECT_EQ(available, -1);
}

// ---------------------------------------------------------------- ParseCgroupBytes

TEST(ParseCgroupBytesTest, NumbersAndMax) {
  EXPECT_EQ(ParseCgroupBytes("max\n"), -1);
  EXPECT_EQ(ParseCgroupBytes("12345\n"), 12345);
  EXPECT_EQ(ParseCgroupBytes("0\n"), 0);
  EXPECT_EQ(ParseCgroupBytes("  8589934592 \r\n"), 8 * kGiB);
  EXPECT_EQ(ParseCgroupBytes("9223372036854775807"), INT64_MAX);
}

TEST(ParseCgroupBytesTest, GarbageIsUnknown) {
  for (const char* text : {"", "\n", "-1\n", "12a\n", "1 2\n", "max max\n", "MAX\n", "0x10\n",
                                  "9223372036854775808\n", "1e9\n", "+5\n"}) {
    EXPECT_EQ(ParseCgroupBytes(text), -1) << text;
  }
  EXPECT_EQ(ParseCgroupBytes("12\0 34"s), -1);
  EXPECT_EQ(ParseCgroupBytes("\xff\xfe\x00"s), -1);
}

// ---------------------------------------------------------------- ParsePsiMemory

TEST(ParsePsiMemoryTest, RealFile) {
  double some = 0, full = 0;
  EXPECT_TRUE(ParsePsiMemory(kPsi, &some, &full));
  EXPECT_DOUBLE_EQ(some, 0.28);
  EXPECT_DOUBLE_EQ(full, 0.0);
  EXPECT_TRUE(ParsePsiMemory("full avg60=1 avg10=55.5 total=3\nsome total=9 avg10=99.99\n", &some, &full));
  EXPECT_DOUBLE_EQ(some, 99.99);
  EXPECT_DOUBLE_EQ(full, 55.5);
  EXPECT_TRUE(ParsePsiMemory(kPsi, nullptr, nullptr));
}

TEST(ParsePsiMemoryTest, MissingLineIsUnknown) {
  double some = 0, full = 0;
  EXPECT_FALSE(ParsePsiMemory("some avg10=3.50 avg60=0.56 avg300=0.62 total=7929001\n", &some, &full));
  EXPECT_DOUBLE_EQ(some, 3.5);
  EXPECT_EQ(full, -1);
  EXPECT_FALSE(ParsePsiMemory("", &some, &full));
  EXPECT_EQ(some, -1);
}

TEST(ParsePsiMemoryTest, MalformedValuesAreUnknown) {
  for (const std::string value : {"", "abc", "-1", "nan", "inf", "100.5", "1.2.3", "1,5", "0x1p3", "5%"}) {
    double some = 0, full = 0;
    const std::string text = "some avg10=" + value + " avg60=0.00\nfull avg10=1.00\n";
    EXPECT_FALSE(ParsePsiMemory(text, &some, &full)) << value;
    EXPECT_EQ(some, -1) << value;
    EXPECT_DOUBLE_EQ(full, 1.0) << value;
  }
}

TEST(ParsePsiMemoryTest, TruncatedAndBinary) {
  double some = 0, full = 0;
  EXPECT_FALSE(ParsePsiMemory(kPsi.substr(0, 16), &some, &full));  // "some avg10=0.28 "
  EXPECT_DOUBLE_EQ(some, 0.28);
  EXPECT_EQ(full, -1);
  EXPECT_FALSE(ParsePsiMemory("some avg10", &some, &full));
  EXPECT_EQ(some, -1);
  EXPECT_FALSE(ParsePsiMemory("somex avg10=1\n\0full\xff avg10=2"s, &some, &full));
  EXPECT_EQ(some, -1);
  EXPECT_EQ(full, -1);
}

// ---------------------------------------------------------------- CgroupV2Path

TEST(CgroupV2PathTest, UnifiedHierarchy) {
  EXPECT_EQ(CgroupV2Path("0::/user.slice/user-1000.slice/session-2.scope\n"),
            "/user.slice/user-1000.slice/session-2.scope");
  EXPECT_EQ(CgroupV2Path("0::/\n"), "/");
  EXPECT_EQ(CgroupV2Path("0::/system.slice/cairn.service\r\n"), "/system.slice/cairn.service");
  EXPECT_EQ(CgroupV2Path("0::/no-newline"), "/no-newline");
}

TEST(CgroupV2PathTest, HybridV1AndV2) {
  EXPECT_EQ(CgroupV2Path(kHybridCgroup), "/");
  EXPECT_EQ(CgroupV2Path("12:memory:/docker/abc\n10::/not-v2\n0::/docker/abc\n1:name=systemd:/x\n"),
            "/docker/abc");
}

TEST(CgroupV2PathTest, NoUsablePath) {
  EXPECT_EQ(CgroupV2Path("4:memory:/a\n1:cpu:/b\n"), "");  // pure v1
  EXPECT_EQ(CgroupV2Path(""), "");
  EXPECT_EQ(CgroupV2Path("0::\n"), "");
  EXPECT_EQ(CgroupV2Path("0::relative/path\n"), "");
  EXPECT_EQ(CgroupV2Path("0::/../../outside-namespace\n"), "");  // outside the cgroup namespace
  EXPECT_EQ(CgroupV2Path("0::/a/..\n"), "");
  EXPECT_EQ(CgroupV2Path("0::/a\0b\n"s), "");
  EXPECT_EQ(CgroupV2Path(" 0::/a\n"), "");
  EXPECT_EQ(CgroupV2Path("0::/..a/b..\n"), "/..a/b..");  // dots inside a name are fine
}

// ---------------------------------------------------------------- Classify

// A reading with only host memory known: `available` of 1'000'000 bytes free.
MemoryReading Host(double available) {
  MemoryReading r;
  r.mem_total_bytes = 1'000'000;
  r.mem_available_bytes = std::llround(available * 1'000'000);
  return r;
}

MemoryReading Psi(double some, double full) {
  MemoryReading r;
  r.psi_some_avg10 = some;
  r.psi_full_avg10 = full;
  return r;
}

constexpr PressureGrade kNormal = PressureGrade::kNormal;
constexpr PressureGrade kShed = PressureGrade::kShed;
constexpr PressureGrade kSpill = PressureGrade::kSpill;
constexpr PressureGrade kDrop = PressureGrade::kDrop;

TEST(MemoryReadingTest, AvailableFractionTakesTheTighterLimit) {
  EXPECT_EQ(MemoryReading{}.AvailableFraction(), -1);
  EXPECT_DOUBLE_EQ(Host(0.25).AvailableFraction(), 0.25);
  MemoryReading r = Host(0.9);
  r.cgroup_max_bytes = 1000;
  r.cgroup_current_bytes = 950;
  EXPECT_DOUBLE_EQ(r.AvailableFraction(), 0.05);
  r.cgroup_current_bytes = 1200;  // briefly over the limit
  EXPECT_DOUBLE_EQ(r.AvailableFraction(), 0.0);
  r.cgroup_current_bytes = 100;
  EXPECT_DOUBLE_EQ(r.AvailableFraction(), 0.9);  // host is tighter now
  MemoryReading cgroup_only;
  cgroup_only.cgroup_max_bytes = 4 * kGiB;
  cgroup_only.cgroup_current_bytes = 3 * kGiB;
  EXPECT_DOUBLE_EQ(cgroup_only.AvailableFraction(), 0.25);
  cgroup_only.cgroup_max_bytes = -1;  // unlimited
  EXPECT_EQ(cgroup_only.AvailableFraction(), -1);
  MemoryReading bogus_host;
  bogus_host.mem_total_bytes = 100;
  bogus_host.mem_available_bytes = 200;
  EXPECT_DOUBLE_EQ(bogus_host.AvailableFraction(), 1.0);
}

TEST(ClassifyTest, ToStringNamesEveryGrade) {
  EXPECT_EQ(ToString(kNormal), "normal");
  EXPECT_EQ(ToString(kShed), "shed");
  EXPECT_EQ(ToString(kSpill), "spill");
  EXPECT_EQ(ToString(kDrop), "drop");
  EXPECT_EQ(ToString(static_cast<PressureGrade>(7)), "unknown");
}

TEST(ClassifyTest, UnknownNeverRaisesTheGrade) {
  const PressureThresholds t;
  EXPECT_EQ(Classify(MemoryReading{}, t, kNormal), kNormal);
  MemoryReading unlimited_cgroup;
  unlimited_cgroup.cgroup_current_bytes = 100 * kGiB;  // max unknown: no fraction
  EXPECT_EQ(Classify(unlimited_cgroup, t, kNormal), kNormal);
  // Unknown values do not hold a grade either: de-escalation proceeds one step.
  EXPECT_EQ(Classify(MemoryReading{}, t, kDrop), kSpill);
}

TEST(ClassifyTest, AvailableFractionThresholds) {
  const PressureThresholds t;
  EXPECT_EQ(Classify(Host(0.50), t, kNormal), kNormal);
  EXPECT_EQ(Classify(Host(0.15), t, kNormal), kNormal);  // strictly below enters
  EXPECT_EQ(Classify(Host(0.149), t, kNormal), kShed);
  EXPECT_EQ(Classify(Host(0.08), t, kNormal), kShed);
  EXPECT_EQ(Classify(Host(0.079), t, kNormal), kSpill);
  EXPECT_EQ(Classify(Host(0.04), t, kNormal), kSpill);
  EXPECT_EQ(Classify(Host(0.039), t, kNormal), kDrop);
  EXPECT_EQ(Classify(Host(0.0), t, kNormal), kDrop);
}

TEST(ClassifyTest, CgroupLimitDrivesTheGradeWhenTighter) {
  MemoryReading r = Host(0.95);
  r.cgroup_max_bytes = 8 * kGiB;
  r.cgroup_current_bytes = 8 * kGiB - 500 * kMiB;  // ~6.1% free
  EXPECT_EQ(Classify(r, PressureThresholds{}, kNormal), kSpill);
}

TEST(ClassifyTest, PsiDrivesTheGrade) {
  const PressureThresholds t;
  EXPECT_EQ(Classify(Psi(10, 0), t, kNormal), kNormal);
  EXPECT_EQ(Classify(Psi(10.5, 0), t, kNormal), kShed);
  EXPECT_EQ(Classify(Psi(25.5, 0), t, kNormal), kSpill);
  EXPECT_EQ(Classify(Psi(25.5, 20.5), t, kNormal), kDrop);
  EXPECT_EQ(Classify(Psi(-1, 20.5), t, kNormal), kDrop);  // full alone is enough
  EXPECT_EQ(Classify(Psi(90, -1), t, kNormal), kSpill);   // some never reaches drop
  MemoryReading both = Host(0.12);                        // shed by fraction
  both.psi_some_avg10 = 30;                               // spill by PSI
  EXPECT_EQ(Classify(both, t, kNormal), kSpill);
}

TEST(ClassifyTest, EscalationIsImmediate) {
  const PressureThresholds t;
  EXPECT_EQ(Classify(Host(0.01), t, kNormal), kDrop);
  EXPECT_EQ(Classify(Host(0.05), t, kShed), kSpill);
  EXPECT_EQ(Classify(Host(0.05), t, kSpill), kSpill);
}

TEST(ClassifyTest, DeescalationIsOneGradePerCall) {
  const PressureThresholds t;
  const MemoryReading relaxed = Host(0.9);
  EXPECT_EQ(Classify(relaxed, t, kDrop), kSpill);
  EXPECT_EQ(Classify(relaxed, t, kSpill), kShed);
  EXPECT_EQ(Classify(relaxed, t, kShed), kNormal);
  // A lower target stops the descent where it is.
  EXPECT_EQ(Classify(Host(0.07), t, kDrop), kSpill);
  EXPECT_EQ(Classify(Host(0.07), t, kSpill), kSpill);
}

TEST(ClassifyTest, HysteresisOnTheFraction) {
  const PressureThresholds t;  // shed below 0.15, leave at >= 0.17
  EXPECT_EQ(Classify(Host(0.16), t, kNormal), kNormal);  // not entered from below...
  EXPECT_EQ(Classify(Host(0.16), t, kShed), kShed);      // ...but not left from above
  EXPECT_EQ(Classify(Host(0.169), t, kShed), kShed);
  EXPECT_EQ(Classify(Host(0.171), t, kShed), kNormal);
  EXPECT_EQ(Classify(Host(0.059), t, kDrop), kDrop);  // drop below 0.04, leave at >= 0.06
  EXPECT_EQ(Classify(Host(0.061), t, kDrop), kSpill);
  EXPECT_EQ(Classify(Host(0.099), t, kSpill), kSpill);  // spill below 0.08, leave at >= 0.10
  EXPECT_EQ(Classify(Host(0.101), t, kSpill), kShed);
  PressureThresholds no_margin = t;
  no_margin.hysteresis = 0;
  EXPECT_EQ(Classify(Host(0.16), no_margin, kShed), kNormal);
}

TEST(ClassifyTest, HysteresisOnPsi) {
  const PressureThresholds t;  // shed above 10, leave at <= 8
  MemoryReading r = Host(0.9);
  r.psi_some_avg10 = 9;
  EXPECT_EQ(Classify(r, t, kNormal), kNormal);
  EXPECT_EQ(Classify(r, t, kShed), kShed);  // plenty free, but PSI still above 0.8x
  r.psi_some_avg10 = 7.9;
  EXPECT_EQ(Classify(r, t, kShed), kNormal);
  r = Host(0.16);  // PSI calm, but the fraction is inside the margin: both must clear
  r.psi_some_avg10 = 0;
  EXPECT_EQ(Classify(r, t, kShed), kShed);
  const MemoryReading full = Psi(0, 17);  // drop above full 20, leave at <= 16
  EXPECT_EQ(Classify(full, t, kDrop), kDrop);
  EXPECT_EQ(Classify(Psi(0, 15.9), t, kDrop), kSpill);
}

TEST(ClassifyTest, OutOfRangePreviousIsTreatedAsDrop) {
  EXPECT_EQ(Classify(Host(0.9), PressureThresholds{}, static_cast<PressureGrade>(200)), kSpill);
}

// ---------------------------------------------------------------- SystemPressureSource

// A private proc/ and cgroup/ tree under a fresh temporary directory.
class FixtureTree {
 public:
  FixtureTree() {
    std::string tmpl = (fs::temp_directory_path() / "cairn-mp-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = tmpl;
  }
  ~FixtureTree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string proc() const { return (root_ / "proc").string(); }
  std::string cgroup() const { return (root_ / "cgroup").string(); }
  // relative: "proc/meminfo", "cgroup/a/memory.max", ...
  void Write(const std::string& relative, std::string_view text) const {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  }
  void Remove(const std::string& relative) const { fs::remove(root_ / relative); }
  SystemPressureSource Source() const { return SystemPressureSource(proc(), cgroup()); }

 private:
  fs::path root_;
};

// The whole tree of a process in /app.slice/cairn.service with a 2 GiB limit.
void WriteFullTree(const FixtureTree& tree) {
  tree.Write("proc/meminfo", kMeminfo);
  tree.Write("proc/pressure/memory", kPsi);
  tree.Write("proc/self/cgroup", "0::/app.slice/cairn.service\n");
  tree.Write("cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  tree.Write("cgroup/app.slice/cgroup.controllers", "memory pids\n");
  tree.Write("cgroup/app.slice/memory.max", "max\n");
  tree.Write("cgroup/app.slice/memory.current", "3221225472\n");
  tree.Write("cgroup/app.slice/cairn.service/cgroup.controllers", "");
  tree.Write("cgroup/app.slice/cairn.service/memory.max", "2147483648\n");
  tree.Write("cgroup/app.slice/cairn.service/memory.current", "1073741824\n");
}

TEST(SystemPressureSourceTest, ReadsEveryFile) {
  FixtureTree tree;
  WriteFullTree(tree);
  const MemoryReading r = tree.Source().Read();
  EXPECT_EQ(r.mem_total_bytes, int64_t{24683664} * 1024);
  EXPECT_EQ(r.mem_available_bytes, int64_t{23602452} * 1024);
  EXPECT_EQ(r.cgroup_max_bytes, 2 * kGiB);
  EXPECT_EQ(r.cgroup_current_bytes, 1 * kGiB);
  EXPECT_DOUBLE_EQ(r.psi_some_avg10, 0.28);
  EXPECT_DOUBLE_EQ(r.psi_full_avg10, 0.0);
  EXPECT_DOUBLE_EQ(r.AvailableFraction(), 0.5);  // the cgroup is tighter than the host
}

TEST(SystemPressureSourceTest, MaxLimitReportsUnlimitedWithOwnUsage) {
  FixtureTree tree;
  WriteFullTree(tree);
  tree.Write("cgroup/app.slice/cairn.service/memory.max", "max\n");
  const MemoryReading r = tree.Source().Read();
  EXPECT_EQ(r.cgroup_max_bytes, -1);
  EXPECT_EQ(r.cgroup_current_bytes, 1 * kGiB);  // this cgroup's, not the parent's 3 GiB
  EXPECT_NEAR(r.AvailableFraction(), 23602452.0 / 24683664.0, 1e-12);
}

TEST(SystemPressureSourceTest, AncestorLimitBindsWhenItHasLessHeadroom) {
  FixtureTree tree;
  WriteFullTree(tree);
  tree.Write("cgroup/app.slice/memory.max", "3489660928\n");  // 3.25 GiB, 256 MiB headroom
  MemoryReading r = tree.Source().Read();
  EXPECT_EQ(r.cgroup_max_bytes, 3 * kGiB + 256 * kMiB);
  EXPECT_EQ(r.cgroup_current_bytes, 3 * kGiB);
  tree.Write("cgroup/app.slice/memory.max", "8589934592\n");  // 5 GiB headroom: own 1 GiB binds
  r = tree.Source().Read();
  EXPECT_EQ(r.cgroup_max_bytes, 2 * kGiB);
  EXPECT_EQ(r.cgroup_current_bytes, 1 * kGiB);
}

TEST(SystemPressureSourceTest, MissingFilesLeaveFieldsUnknown) {
  FixtureTree tree;
  MemoryReading r = tree.Source().Read();  // nothing at all
  EXPECT_EQ(r.mem_total_bytes, -1);
  EXPECT_EQ(r.mem_available_bytes, -1);
  EXPECT_EQ(r.cgroup_max_bytes, -1);
  EXPECT_EQ(r.cgroup_current_bytes, -1);
  EXPECT_EQ(r.psi_some_avg10, -1);
  EXPECT_EQ(r.psi_full_avg10, -1);
  EXPECT_EQ(Classify(r, PressureThresholds{}, PressureGrade::kNormal), PressureGrade::kNormal);

  WriteFullTree(tree);
  tree.Remove("proc/pressure/memory");  // kernel without PSI (or psi=0)
  tree.Remove("cgroup/app.slice/cairn.service/memory.current");
  r = tree.Source().Read();
  EXPECT_EQ(r.mem_total_bytes, int64_t{24683664} * 1024);
  EXPECT_EQ(r.psi_some_avg10, -1);
  EXPECT_EQ(r.psi_full_avg10, -1);
  EXPECT_EQ(r.cgroup_max_bytes, -1);  // a limit without usage is useless
  EXPECT_EQ(r.cgroup_current_bytes, -1);

  tree.Remove("proc/self/cgroup");
  r = tree.Source().Read();
  EXPECT_EQ(r.cgroup_max_bytes, -1);
  EXPECT_EQ(r.cgroup_current_bytes, -1);
  EXPECT_EQ(r.mem_total_bytes, int64_t{24683664} * 1024);
}

TEST(SystemPressureSourceTest, MalformedFilesLeaveFieldsUnknown) {
  FixtureTree tree;
  WriteFullTree(tree);
  tree.Write("proc/meminfo", "\x7f" "ELF\0\0garbage"s);
  tree.Write("proc/pressure/memory", "some avg10=lots\n");
  tree.Write("cgroup/app.slice/cairn.service/memory.max", "2G\n");
  const MemoryReading r = tree.Source().Read();
  EXPECT_EQ(r.mem_total_bytes, -1);
  EXPECT_EQ(r.mem_available_bytes, -1);
  EXPECT_EQ(r.psi_some_avg10, -1);
  EXPECT_EQ(r.cgroup_max_bytes, -1);
  EXPECT_EQ(r.cgroup_current_bytes, 1 * kGiB);
}

TEST(SystemPressureSourceTest, PureV1HostHasNoCgroupReading) {
  FixtureTree tree;
  WriteFullTree(tree);
  tree.Write("proc/self/cgroup", "4:memory:/app.slice/cairn.service\n1:cpu:/\n");
  const MemoryReading r = tree.Source().Read();
  EXPECT_EQ(r.cgroup_max_bytes, -1);
  EXPECT_EQ(r.cgroup_current_bytes, -1);
}

TEST(SystemPressureSourceTest, HybridHostReadsTheUnifiedMount) {
  FixtureTree tree;
  tree.Write("proc/self/cgroup", "4:memory:/job\n1:cpu:/\n0::/job\n");
  tree.Write("cgroup/memory/job/memory.limit_in_bytes", "1073741824\n");  // v1: ignored
  tree.Write("cgroup/unified/cgroup.controllers", "");
  tree.Write("cgroup/unified/job/cgroup.controllers", "");
  tree.Write("cgroup/unified/job/memory.max", "1000\n");
  tree.Write("cgroup/unified/job/memory.current", "990\n");
  const MemoryReading r = tree.Source().Read();
  EXPECT_EQ(r.cgroup_max_bytes, 1000);
  EXPECT_EQ(r.cgroup_current_bytes, 990);
  EXPECT_EQ(Classify(r, PressureThresholds{}, PressureGrade::kNormal), PressureGrade::kDrop);
}

TEST(SystemPressureSourceTest, RootCgroupOfANamespace) {
  // In a container with its own cgroup namespace the path is "/" and limits sit on
  // the namespace root itself.
  FixtureTree tree;
  tree.Write("proc/self/cgroup", "0::/\n");
  tree.Write("cgroup/memory.max", "4294967296\n");
  tree.Write("cgroup/memory.current", "4026531840\n");
  const MemoryReading r = tree.Source().Read();
  EXPECT_EQ(r.cgroup_max_bytes, 4 * kGiB);
  EXPECT_EQ(r.cgroup_current_bytes, 4 * kGiB - 256 * kMiB);
}

TEST(SystemPressureSourceTest, RealSystemIsInternallyConsistent) {
  SystemPressureSource source;
  const MemoryReading r = source.Read();
  if (fs::exists("/proc/meminfo")) {
    EXPECT_GT(r.mem_total_bytes, 0);
  }
  if (r.mem_total_bytes >= 0 && r.mem_available_bytes >= 0) {
    EXPECT_LE(r.mem_available_bytes, r.mem_total_bytes);
  }
  if (r.cgroup_max_bytes >= 0) {
    EXPECT_GE(r.cgroup_current_bytes, 0);
  }
  for (double psi : {r.psi_some_avg10, r.psi_full_avg10}) {
    EXPECT_TRUE(psi == -1 || (psi >= 0 && psi <= 100)) << psi;
  }
  if (r.psi_full_avg10 >= 0) {
    EXPECT_GE(r.psi_some_avg10, 0);
  }
  const double fraction = r.AvailableFraction();
  EXPECT_TRUE(fraction == -1 || (fraction >= 0 && fraction <= 1)) << fraction;
  std::printf("real system: total=%lld available=%lld cgroup max=%lld current=%lld psi some=%.2f full=%.2f "
              "fraction=%.3f grade=%s\n",
              static_cast<long long>(r.mem_total_bytes), static_cast<long long>(r.mem_available_bytes),
              static_cast<long long>(r.cgroup_max_bytes), static_cast<long long>(r.cgroup_current_bytes),
              r.psi_some_avg10, r.psi_full_avg10, fraction,
              std::string(ToString(Classify(r, PressureThresholds{}, PressureGrade::kNormal))).c_str());
}

// ---------------------------------------------------------------- MemoryGuard

// Readings shared between a test and the FakeSource the guard owns.
struct Script {
  std::mutex mutex;
  std::vector<MemoryReading> readings;  // played in order; the last one repeats
  size_t next = 0;
  int reads = 0;
  int throw_first = 0;  // this many Read() calls throw first

  void Set(const MemoryReading& reading) {
    std::lock_guard<std::mutex> lock(mutex);
    readings = {reading};
    next = 0;
  }
  int Reads() {
    std::lock_guard<std::mutex> lock(mutex);
    return reads;
  }
};

class FakeSource : public PressureSource {
 public:
  explicit FakeSource(std::shared_ptr<Script> script) : script_(std::move(script)) {}
  MemoryReading Read() override {
    std::lock_guard<std::mutex> lock(script_->mutex);
    ++script_->reads;
    if (script_->throw_first > 0) {
      --script_->throw_first;
      throw std::runtime_error("injected read failure");
    }
    if (script_->readings.empty()) return {};
    const size_t i = std::min(script_->next, script_->readings.size() - 1);
    ++script_->next;
    return script_->readings[i];
  }

 private:
  std::shared_ptr<Script> script_;
};

using Change = std::tuple<PressureGrade, PressureGrade, double>;  // from, to, available fraction

// Polls `condition` until it holds or 5 s pass.
template <typename Condition>
bool Eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(MemoryGuardTest, PollSequenceReportsChangesAndCounts) {
  auto script = std::make_shared<Script>();
  script->readings = {Host(0.5), Host(0.10), Host(0.02), Host(0.5), Host(0.5), Host(0.5), Host(0.5), Host(0.07)};
  std::vector<Change> changes;
  MemoryGuard* guard_ptr = nullptr;
  std::vector<PressureGrade> seen_inside;
  MemoryGuard guard(std::make_unique<FakeSource>(script), PressureThresholds{}, 1h,
                    [&](PressureGrade from, PressureGrade to, const MemoryReading& r) {
                      changes.emplace_back(from, to, r.AvailableFraction());
                      // Must not deadlock: the state lock is not held here.
                      seen_inside.push_back(guard_ptr->grade());
                      EXPECT_EQ(guard_ptr->last_reading().mem_available_bytes, r.mem_available_bytes);
                    });
  guard_ptr = &guard;
  EXPECT_EQ(guard.grade(), kNormal);
  std::vector<PressureGrade> grades;
  for (size_t i = 0; i < script->readings.size(); ++i) grades.push_back(guard.Poll());
  EXPECT_EQ(grades, (std::vector<PressureGrade>{kNormal, kShed, kDrop, kSpill, kShed, kNormal, kNormal, kSpill}));
  const std::vector<Change> expected = {{kNormal, kShed, 0.10}, {kShed, kDrop, 0.02},  {kDrop, kSpill, 0.5},
                                        {kSpill, kShed, 0.5},   {kShed, kNormal, 0.5}, {kNormal, kSpill, 0.07}};
  EXPECT_EQ(changes, expected);
  EXPECT_EQ(seen_inside, (std::vector<PressureGrade>{kShed, kDrop, kSpill, kShed, kNormal, kSpill}));
  EXPECT_EQ(guard.transitions(kNormal), 1u);
  EXPECT_EQ(guard.transitions(kShed), 2u);
  EXPECT_EQ(guard.transitions(kSpill), 2u);
  EXPECT_EQ(guard.transitions(kDrop), 1u);
  EXPECT_EQ(guard.transitions(static_cast<PressureGrade>(9)), 0u);
  EXPECT_EQ(guard.grade(), kSpill);
  EXPECT_EQ(guard.last_reading().mem_available_bytes, 70'000);
}

TEST(MemoryGuardTest, WorksWithoutACallback) {
  auto script = std::make_shared<Script>();
  script->readings = {Psi(0, 50)};
  MemoryGuard guard(std::make_unique<FakeSource>(script), PressureThresholds{}, 1h, nullptr);
  EXPECT_EQ(guard.Poll(), kDrop);
  EXPECT_EQ(guard.transitions(kDrop), 1u);
}

TEST(MemoryGuardTest, ThreadFollowsTheSourceAndStopsPromptly) {
  auto script = std::make_shared<Script>();
  script->Set(Host(0.5));
  std::mutex mutex;
  std::vector<std::pair<PressureGrade, PressureGrade>> changes;
  std::thread::id callback_thread;
  MemoryGuard guard(std::make_unique<FakeSource>(script), PressureThresholds{}, 2ms,
                    [&](PressureGrade from, PressureGrade to, const MemoryReading&) {
                      std::lock_guard<std::mutex> lock(mutex);
                      changes.emplace_back(from, to);
                      callback_thread = std::this_thread::get_id();
                    });
  guard.Start();
  guard.Start();  // idempotent
  ASSERT_TRUE(Eventually([&] { return script->Reads() >= 3; }));
  EXPECT_EQ(guard.grade(), kNormal);
  script->Set(Host(0.01));
  ASSERT_TRUE(Eventually([&] { return guard.grade() == kDrop; }));
  script->Set(Host(0.9));
  ASSERT_TRUE(Eventually([&] { return guard.grade() == kNormal; }));
  const auto before = std::chrono::steady_clock::now();
  guard.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);
  const int reads = script->Reads();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(script->Reads(), reads);  // really stopped
  std::lock_guard<std::mutex> lock(mutex);
  const std::vector<std::pair<PressureGrade, PressureGrade>> expected = {
      {kNormal, kDrop}, {kDrop, kSpill}, {kSpill, kShed}, {kShed, kNormal}};
  EXPECT_EQ(changes, expected);
  EXPECT_NE(callback_thread, std::this_thread::get_id());
  EXPECT_EQ(guard.transitions(kDrop), 1u);
  EXPECT_EQ(guard.transitions(kNormal), 1u);
}

TEST(MemoryGuardTest, StopWakesALongSleepAndRestartWorks) {
  auto script = std::make_shared<Script>();
  script->Set(Host(0.5));
  MemoryGuard guard(std::make_unique<FakeSource>(script), PressureThresholds{}, 1h, nullptr);
  guard.Stop();  // stopping a guard that never started is harmless
  guard.Start();
  ASSERT_TRUE(Eventually([&] { return script->Reads() == 1; }));  // polls at once
  auto before = std::chrono::steady_clock::now();
  guard.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);  // not the 1 h interval
  script->Set(Host(0.1));
  guard.Start();
  ASSERT_TRUE(Eventually([&] { return guard.grade() == kShed; }));
  before = std::chrono::steady_clock::now();
  guard.Stop();
  guard.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);
  EXPECT_EQ(script->Reads(), 2);
}

TEST(MemoryGuardTest, DestructorStopsARunningThread) {
  auto script = std::make_shared<Script>();
  script->Set(Host(0.5));
  const auto before = std::chrono::steady_clock::now();
  {
    MemoryGuard guard(std::make_unique<FakeSource>(script), PressureThresholds{}, 1h, nullptr);
    guard.Start();
    ASSERT_TRUE(Eventually([&] { return script->Reads() == 1; }));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - before, 2s);
}

TEST(MemoryGuardTest, ThreadSurvivesAThrowingSource) {
  auto script = std::make_shared<Script>();
  script->Set(Psi(30, 0));
  script->throw_first = 2;
  MemoryGuard guard(std::make_unique<FakeSource>(script), PressureThresholds{}, 1ms, nullptr);
  guard.Start();
  ASSERT_TRUE(Eventually([&] { return guard.grade() == kSpill; }));
  guard.Stop();
  EXPECT_GE(script->Reads(), 3);
  EXPECT_THROW(
      {
        script->throw_first = 1;
        guard.Poll();  // a synchronous Poll lets the exception reach its caller
      },
      std::runtime_error);
}

TEST(MemoryGuardTest, FixtureFilesAsAnInjectedPressureSource) {
  FixtureTree tree;
  WriteFullTree(tree);
  std::vector<std::pair<PressureGrade, PressureGrade>> changes;
  MemoryGuard guard(std::make_unique<SystemPressureSource>(tree.proc(), tree.cgroup()), PressureThresholds{}, 1h,
                    [&](PressureGrade from, PressureGrade to, const MemoryReading&) { changes.emplace_back(from, to); });
  EXPECT_EQ(guard.Poll(), kNormal);
  tree.Write("cgroup/app.slice/cairn.service/memory.current", "2040109466\n");  // 5% of 2 GiB free
  EXPECT_EQ(guard.Poll(), kSpill);
  tree.Write("proc/pressure/memory", "some avg10=40.00 avg60=1 avg300=1 total=1\nfull avg10=25.00 avg60=0 "
                                     "avg300=0 total=0\n");
  EXPECT_EQ(guard.Poll(), kDrop);
  WriteFullTree(tree);
  EXPECT_EQ(guard.Poll(), kSpill);
  const std::vector<std::pair<PressureGrade, PressureGrade>> expected = {
      {kNormal, kSpill}, {kSpill, kDrop}, {kDrop, kSpill}};
  EXPECT_EQ(changes, expected);
}

}  // namespace
}  // namespace cairn::cache
