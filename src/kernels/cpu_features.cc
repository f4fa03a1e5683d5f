#include "kernels/cpu_features.h"

#include <hwy/targets.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

#if HWY_ARCH_X86
#include <cpuid.h>
#endif

namespace cairn::kernels {
namespace {

// Highway's supported targets before RestrictDispatchToCpu() narrowed them.
int64_t g_highway_supported = 0;
std::once_flag g_restrict_once;
DispatchCap g_cap;
int64_t g_disabled = 0;   // the targets RestrictDispatchToCpu disabled

enum class Word { kLeaf1Ecx, kLeaf1Edx, kLeaf7Ebx, kLeaf7Ecx, kExt1Ecx, kXcr0 };

struct NeedBit {
  const char* name;
  Word word;
  int bit;
};

// Every extension a compiled x86 target's code may use (its attribute string,
// cmake/HighwayTargetFix.cmake) and the OS register states it needs. Each
// target needs its own list and those of the targets below it.
constexpr NeedBit kAvx2Needs[] = {
    {"sse2", Word::kLeaf1Edx, 26},   {"sse3", Word::kLeaf1Ecx, 0},    {"ssse3", Word::kLeaf1Ecx, 9},
    {"sse4.1", Word::kLeaf1Ecx, 19}, {"sse4.2", Word::kLeaf1Ecx, 20}, {"pclmul", Word::kLeaf1Ecx, 1},
    {"aes", Word::kLeaf1Ecx, 25},    {"avx", Word::kLeaf1Ecx, 28},    {"avx2", Word::kLeaf7Ebx, 5},
    {"bmi1", Word::kLeaf7Ebx, 3},    {"bmi2", Word::kLeaf7Ebx, 8},    {"fma", Word::kLeaf1Ecx, 12},
    {"f16c", Word::kLeaf1Ecx, 29},   {"lzcnt", Word::kExt1Ecx, 5},    {"xcr0:sse", Word::kXcr0, 1},
    {"xcr0:avx", Word::kXcr0, 2},
};
constexpr NeedBit kAvx3Needs[] = {
    {"avx512f", Word::kLeaf7Ebx, 16},  {"avx512vl", Word::kLeaf7Ebx, 31},      {"avx512dq", Word::kLeaf7Ebx, 17},
    {"avx512bw", Word::kLeaf7Ebx, 30}, {"xcr0:opmask", Word::kXcr0, 5},       {"xcr0:zmm_hi256", Word::kXcr0, 6},
    {"xcr0:hi16_zmm", Word::kXcr0, 7},
};
constexpr NeedBit kAvx3DlNeeds[] = {
    {"vpclmulqdq", Word::kLeaf7Ecx, 10},   {"avx512vbmi", Word::kLeaf7Ecx, 1},   {"avx512vbmi2", Word::kLeaf7Ecx, 6},
    {"vaes", Word::kLeaf7Ecx, 9},          {"avx512vnni", Word::kLeaf7Ecx, 11},  {"avx512bitalg", Word::kLeaf7Ecx, 12},
    {"avx512vpopcntdq", Word::kLeaf7Ecx, 14},
};

bool Has(const CpuSnapshot& cpu, const NeedBit& need) {
  unsigned long long word = 0;
  switch (need.word) {
    case Word::kLeaf1Ecx: word = cpu.leaf1_ecx; break;
    case Word::kLeaf1Edx: word = cpu.leaf1_edx; break;
    case Word::kLeaf7Ebx: word = cpu.leaf7_ebx; break;
    case Word::kLeaf7Ecx: word = cpu.leaf7_ecx; break;
    case Word::kExt1Ecx: word = cpu.ext1_ecx; break;
    case Word::kXcr0: word = cpu.xcr0; break;
  }
  return (word >> need.bit) & 1u;
}

template <size_t N>
void AddNeeds(const CpuSnapshot& cpu, const NeedBit (&bits)[N], std::vector<CpuNeed>* needs) {
  for (const NeedBit& b : bits) needs->push_back({b.name, Has(cpu, b)});
}

int64_t TargetBit(const std::string& name) {
  for (int64_t bit : {int64_t{HWY_AVX3_DL}, int64_t{HWY_AVX3}, int64_t{HWY_AVX2}}) {
    if (name == hwy::TargetName(bit)) return bit;
  }
  return 0;
}

}  // namespace

std::string TargetCpuReport::Missing() const {
  std::string missing;
  for (const CpuNeed& need : needs) {
    if (need.present) continue;
    if (!missing.empty()) missing += ' ';
    missing += need.name;
  }
  return missing;
}

CpuSnapshot ReadCpuSnapshot() {
  CpuSnapshot cpu;
#if HWY_ARCH_X86
  unsigned a = 0, b = 0, c = 0, d = 0;
  const unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf >= 1) {
    __cpuid_count(1, 0, a, b, c, d);
    cpu.leaf1_ecx = c;
    cpu.leaf1_edx = d;
  }
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    cpu.leaf7_ebx = b;
    cpu.leaf7_ecx = c;
  }
  if (__get_cpuid_max(0x80000000u, nullptr) >= 0x80000001u) {
    __cpuid_count(0x80000001u, 0, a, b, c, d);
    cpu.ext1_ecx = c;
  }
  if ((cpu.leaf1_ecx >> 27) & 1u) {  // OSXSAVE: the OS enabled XSAVE, so xgetbv exists
    unsigned lo = 0, hi = 0;
    // No compiler target flag is needed for xgetbv: it only runs where OSXSAVE says it exists.
    asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    cpu.xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  }
#endif
  return cpu;
}

std::vector<TargetCpuReport> DescribeTargetCpuNeeds(const CpuSnapshot& cpu) {
  std::vector<TargetCpuReport> reports;
#if HWY_ARCH_X86
  std::vector<CpuNeed> avx2, avx3, avx3_dl;
  AddNeeds(cpu, kAvx2Needs, &avx2);
  avx3 = avx2;
  AddNeeds(cpu, kAvx3Needs, &avx3);
  avx3_dl = avx3;
  AddNeeds(cpu, kAvx3DlNeeds, &avx3_dl);
  const std::pair<int64_t, std::vector<CpuNeed>*> targets[] = {
      {HWY_AVX3_DL, &avx3_dl}, {HWY_AVX3, &avx3}, {HWY_AVX2, &avx2}};
  for (const auto& [bit, needs] : targets) {
    if ((HWY_TARGETS & bit) == 0) continue;
    TargetCpuReport report;
    report.target = hwy::TargetName(bit);
    report.needs = *needs;
    report.highway_supports = (g_highway_supported & bit) != 0;
    report.runnable = report.Missing().empty();
    reports.push_back(std::move(report));
  }
#endif
  return reports;
}

void RestrictDispatchToCpu() {
  std::call_once(g_restrict_once, [] {
    g_highway_supported = hwy::SupportedTargets();
    int64_t disabled = 0;
    for (const TargetCpuReport& report : DescribeTargetCpuNeeds(ReadCpuSnapshot())) {
      if (!report.runnable) disabled |= TargetBit(report.target);
    }
    if (const char* env = std::getenv("CAIRN_MAX_TARGET"); env != nullptr && *env != '\0') {
      g_cap.requested = env;
      const int64_t cap = TargetBit(g_cap.requested);
      g_cap.known = cap != 0;
      // x86 Highway targets: a smaller bit is a better target.
      if (g_cap.known) disabled |= HWY_TARGETS & (cap - 1) & ~int64_t{HWY_SCALAR};
    }
    g_disabled = disabled;
    if (disabled != 0) hwy::DisableTargets(disabled);
  });
}

int64_t RestrictedDispatchTargets() {
  RestrictDispatchToCpu();
  return g_disabled;
}

DispatchCap DispatchCapFromEnv() {
  RestrictDispatchToCpu();
  return g_cap;
}

std::vector<TargetCpuReport> DescribeTargetCpuNeeds() {
  RestrictDispatchToCpu();
  return DescribeTargetCpuNeeds(ReadCpuSnapshot());
}

}  // namespace cairn::kernels
