// Shared helpers for sampling tests.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "sampling/rng.h"

namespace cairn::sampling::test {

// CI's ASan/UBSan run sets CAIRN_SANITIZED=1: statistical loops shrink.
inline bool Sanitized() {
  const char* env = std::getenv("CAIRN_SANITIZED");
  return env != nullptr && std::string(env) == "1";
}

// Random logits in [-scale, scale) from a fixed Rng (no std distributions).
inline std::vector<float> RandomLogits(size_t n, uint64_t seed, float scale = 4.0f) {
  Rng rng(seed, 7);
  std::vector<float> logits(n);
  for (float& l : logits) l = static_cast<float>((rng.Uniform() * 2.0 - 1.0) * scale);
  return logits;
}

// Pearson chi-square of observed counts against expected probabilities over
// cells with expected > 0; cells with expected == 0 must be empty (returns
// +inf otherwise).
inline double ChiSquare(const std::vector<int64_t>& observed, const std::vector<double>& expected_p,
                        int64_t trials, int* degrees_of_freedom) {
  double chi2 = 0.0;
  int cells = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    const double e = expected_p[i] * static_cast<double>(trials);
    if (expected_p[i] <= 0.0) {
      if (observed[i] != 0) return 1e300;
      continue;
    }
    const double d = static_cast<double>(observed[i]) - e;
    chi2 += d * d / e;
    ++cells;
  }
  *degrees_of_freedom = cells - 1;
  return chi2;
}

}  // namespace cairn::sampling::test
