// Helpers shared by the tests of the non-matmul kernels (norm, rope, softmax,
// activation, attention, conv1d, gated_delta): run a body once per SIMD target
// this CPU supports, random data, ulp distances, sanitizer-aware sizes.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include "kernels/cpu_features.h"

namespace cairn::kernels::test {

// Calls body() once per compiled target the CPU can run, forcing dynamic
// dispatch to that target; restores normal dispatch afterwards.
template <class Body>
void ForEachTarget(Body body) {
  RestrictDispatchToCpu();
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    body();
  }
  hwy::SetSupportedTargetsForTest(0);
}

// True in the ASan/UBSan CI build (CAIRN_SANITIZED=1): scale loops down.
inline bool Sanitized() {
  const char* v = std::getenv("CAIRN_SANITIZED");
  return v != nullptr && v[0] == '1';
}

inline std::vector<float> RandomVector(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Distance in units in the last place between two finite floats of the same sign.
inline int64_t UlpDistance(float a, float b) {
  if (a == b) return 0;
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = INT32_MIN - ia;   // map to a monotonic integer line
  if (ib < 0) ib = INT32_MIN - ib;
  return std::llabs(static_cast<int64_t>(ia) - ib);
}

inline bool BitEqual(const float* a, const float* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

}  // namespace cairn::kernels::test
