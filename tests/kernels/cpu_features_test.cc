// The CPU needs of each compiled x86 target and the dispatch restriction.
#include "kernels/cpu_features.h"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/softmax.h"
#include "kernels/targets.h"

namespace cairn::kernels {
namespace {

// A Zen 4 / Ice Lake-like CPU: AVX-512 F/VL/DQ/BW and the AVX3_DL extensions,
// AVX512-VNNI but no AVX-VNNI (CPUID 7.1 EAX bit 4 is never consulted), with an
// OS that saves SSE, AVX and all AVX-512 states.
CpuSnapshot Zen4Like() {
  CpuSnapshot cpu;
  cpu.leaf1_edx = 1u << 26;
  for (int bit : {0, 1, 9, 12, 19, 20, 25, 27, 28, 29}) cpu.leaf1_ecx |= 1u << bit;
  for (int bit : {3, 5, 8, 16, 17, 30, 31}) cpu.leaf7_ebx |= 1u << bit;
  for (int bit : {1, 6, 9, 10, 11, 12, 14}) cpu.leaf7_ecx |= 1u << bit;
  cpu.ext1_ecx = 1u << 5;
  cpu.xcr0 = 0xe7;
  return cpu;
}

const TargetCpuReport* Find(const std::vector<TargetCpuReport>& reports, const char* target) {
  for (const auto& r : reports) {
    if (r.target == target) return &r;
  }
  return nullptr;
}

#if HWY_ARCH_X86

TEST(CpuFeaturesTest, Avx3DlNeedsEvexVnniNotAvxVnni) {
  const auto reports = DescribeTargetCpuNeeds(Zen4Like());
  const TargetCpuReport* dl = Find(reports, "AVX3_DL");
  ASSERT_NE(dl, nullptr);
  EXPECT_TRUE(dl->runnable) << dl->Missing();
  bool needs_avx512vnni = false;
  for (const auto& need : dl->needs) {
    EXPECT_NE(need.name, "avxvnni");
    needs_avx512vnni = needs_avx512vnni || need.name == "avx512vnni";
  }
  EXPECT_TRUE(needs_avx512vnni);
}

TEST(CpuFeaturesTest, MissingExtensionMakesTargetNotRunnable) {
  CpuSnapshot cpu = Zen4Like();
  cpu.leaf7_ecx &= ~(1u << 1);  // no VBMI: Highway 1.0.3's check would still pass AVX3_DL
  const auto reports = DescribeTargetCpuNeeds(cpu);
  EXPECT_FALSE(Find(reports, "AVX3_DL")->runnable);
  EXPECT_EQ(Find(reports, "AVX3_DL")->Missing(), "avx512vbmi");
  EXPECT_TRUE(Find(reports, "AVX3")->runnable);
}

TEST(CpuFeaturesTest, OsWithoutAvx512StatesDisablesAvx512Targets) {
  CpuSnapshot cpu = Zen4Like();
  cpu.xcr0 = 0x7;  // x87, SSE, AVX: no opmask, ZMM_Hi256, Hi16_ZMM
  const auto reports = DescribeTargetCpuNeeds(cpu);
  EXPECT_EQ(Find(reports, "AVX3")->Missing(), "xcr0:opmask xcr0:zmm_hi256 xcr0:hi16_zmm");
  EXPECT_FALSE(Find(reports, "AVX3_DL")->runnable);
  EXPECT_TRUE(Find(reports, "AVX2")->runnable);
  cpu.xcr0 = 0;  // no XSAVE at all
  EXPECT_EQ(Find(DescribeTargetCpuNeeds(cpu), "AVX2")->Missing(), "xcr0:sse xcr0:avx");
}

TEST(CpuFeaturesTest, DispatchRunsOnlyTargetsWhoseNeedsArePresent) {
  const auto reports = DescribeTargetCpuNeeds();
  ASSERT_FALSE(reports.empty());
  const auto runnable = RunnableTargetNames();
  for (const auto& report : reports) {
    const bool dispatchable = std::find(runnable.begin(), runnable.end(), report.target) != runnable.end();
    if (dispatchable) {
      EXPECT_TRUE(report.runnable) << report.target << " missing " << report.Missing();
    }
    if (!report.runnable) {
      EXPECT_FALSE(dispatchable) << report.target;
    }
  }
  const TargetCpuReport* active = Find(reports, ActiveTargetName().c_str());
  if (active != nullptr) {
    EXPECT_TRUE(active->runnable);
  }
}

#endif  // HWY_ARCH_X86

int64_t CompiledTargetBit(const std::string& name) {
  for (int64_t bit = 1; bit != 0 && bit <= HWY_TARGETS; bit <<= 1) {
    if ((HWY_TARGETS & bit) != 0 && name == hwy::TargetName(bit)) return bit;
  }
  return 0;
}

// Highway 1.0.3's SupportedTargets() re-points dispatch at every target the
// CPU has before it applies DisableTargets' mask; asking for the target names
// after the restriction must not send the next kernel call to a disabled one.
TEST(CpuFeaturesTest, TargetQueriesKeepDispatchRestricted) {
  const std::vector<std::string> runnable = RunnableTargetNames();
  if (runnable.size() < 2) GTEST_SKIP() << "needs two runnable targets to disable the best one";
  const int64_t best = CompiledTargetBit(runnable[0]), next = CompiledTargetBit(runnable[1]);
  ASSERT_NE(best, 0);
  ASSERT_NE(next, 0);
  // As RestrictDispatchToCpu does for a target the CPU cannot run or CAIRN_MAX_TARGET.
  hwy::DisableTargets(RestrictedDispatchTargets() | best);
  float x[16] = {1.0f, 2.0f}, y[16];
  Softmax(x, y, 1, 16);                       // dispatch chooses from the restricted set
  EXPECT_EQ(ActiveTargetName(), runnable[1]);  // a query after that choice ...
  EXPECT_EQ(RunnableTargetNames().front(), runnable[1]);
  Softmax(x, y, 1, 16);                       // ... leaves the next dispatch restricted
  const size_t chosen = hwy::GetChosenTarget().GetIndex();
  hwy::DisableTargets(RestrictedDispatchTargets());
  EXPECT_EQ(chosen, hwy::Num0BitsBelowLS1Bit_Nonzero64(static_cast<uint64_t>(HWY_CHOSEN_TARGET_SHIFT(next))))
      << "dispatch went back to " << runnable[0];
}

}  // namespace
}  // namespace cairn::kernels
