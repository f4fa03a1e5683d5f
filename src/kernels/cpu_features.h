// What each compiled x86 kernel target needs from the CPU and the OS, and what
// this machine has (CPUID and the XCR0 register states the OS enables).
//
// A target's needs are the instruction-set extensions its code is compiled
// with (Highway's target attribute string, as corrected by
// cmake/HighwayTargetFix.cmake) plus the register states the OS must save
// (XCR0: SSE, AVX, and the AVX-512 opmask / ZMM_Hi256 / Hi16_ZMM states).
// RestrictDispatchToCpu() disables any target Highway would dispatch to whose
// needs are not all met, so dispatch never runs an instruction the CPU or the
// OS lacks even where Highway's own check is looser than its code
// (Highway 1.0.3's AVX3_DL string enables VBMI, which its check omits).
#pragma once

#include <string>
#include <vector>

namespace cairn::kernels {

struct CpuNeed {
  std::string name;  // e.g. "avx512vnni", "xcr0:zmm_hi256"
  bool present = false;
};

struct TargetCpuReport {
  std::string target;          // Highway target name: "AVX2", "AVX3", "AVX3_DL"
  std::vector<CpuNeed> needs;  // extensions and OS register states, in check order
  bool highway_supports = false;  // Highway's own check passes on this CPU
  bool runnable = false;          // every need is present (dispatch may use it)

  // Names of the needs that are missing, joined by spaces ("" when none).
  std::string Missing() const;
};

// The CPUID words and XCR0 the needs are read from (x86; zero elsewhere).
struct CpuSnapshot {
  unsigned leaf1_ecx = 0, leaf1_edx = 0;  // CPUID 1
  unsigned leaf7_ebx = 0, leaf7_ecx = 0;  // CPUID 7.0
  unsigned ext1_ecx = 0;                  // CPUID 0x80000001
  unsigned long long xcr0 = 0;            // xgetbv(0); 0 when the OS has not enabled XSAVE
};

// This machine's snapshot.
CpuSnapshot ReadCpuSnapshot();

// One report per x86 target compiled into this binary, best first, for the
// given snapshot (tests pass made-up CPUs) or for this machine. Empty on other
// architectures (NEON/SVE dispatch is Highway's own check).
std::vector<TargetCpuReport> DescribeTargetCpuNeeds(const CpuSnapshot& cpu);
std::vector<TargetCpuReport> DescribeTargetCpuNeeds();

// CAIRN_MAX_TARGET=AVX2 (or AVX3, AVX3_DL) caps x86 dispatch at that target:
// to time on one machine the code an older CPU runs, or to step around a
// target that misbehaves. A token's bits depend on the target, so the cap is
// part of what the cache keys on (the active target name). Read once.
struct DispatchCap {
  std::string requested;   // the variable's value; "" when unset
  bool known = false;      // it names a compiled x86 target, so it applies
};
DispatchCap DispatchCapFromEnv();

// Removes from dynamic dispatch every compiled target whose needs are not all
// present, and those above CAIRN_MAX_TARGET. Idempotent and thread-safe; ActiveTargetName(), RunnableTargetNames()
// and `cairn` call it before any kernel runs.
void RestrictDispatchToCpu();

// The Highway target bits RestrictDispatchToCpu disabled (0: none), e.g. for
// a test that disables more and then restores exactly this set.
int64_t RestrictedDispatchTargets();

}  // namespace cairn::kernels
