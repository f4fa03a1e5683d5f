#include "kernels/targets.h"

#include "kernels/cpu_features.h"

#include <hwy/highway.h>
#include <hwy/targets.h>

namespace cairn::kernels {

std::string ActiveTargetName() {
  RestrictDispatchToCpu();
  const int64_t supported = hwy::SupportedTargets() & HWY_TARGETS;
  // The best (lowest-bit on x86) supported target is what dispatch picks.
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    if (supported & target) return hwy::TargetName(target);
  }
  return hwy::TargetName(HWY_STATIC_TARGET);
}

std::vector<std::string> CompiledTargetNames() {
  std::vector<std::string> names;
  for (int64_t bit = 1; bit != 0 && bit <= HWY_TARGETS; bit <<= 1) {
    if (HWY_TARGETS & bit) names.push_back(hwy::TargetName(bit));
  }
  return names;
}

std::vector<std::string> RunnableTargetNames() {
  RestrictDispatchToCpu();
  std::vector<std::string> names;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) names.push_back(hwy::TargetName(target));
  return names;
}

}  // namespace cairn::kernels
