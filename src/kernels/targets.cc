#include "kernels/targets.h"

#include "kernels/cpu_features.h"

#include <hwy/highway.h>
#include <hwy/targets.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cairn::kernels {
namespace {

// Every target compiled into this binary, best (lowest bit on x86) first.
std::vector<int64_t> CompiledTargetBits() {
  std::vector<int64_t> bits;
  for (int64_t bit = 1; bit != 0 && bit <= HWY_TARGETS; bit <<= 1) {
    if (HWY_TARGETS & bit) bits.push_back(bit);
  }
  return bits;
}

// The compiled targets dispatch may choose, best (lowest bit on x86) first.
// hwy::SupportedTargets() in Highway 1.0.3 first points dynamic dispatch at
// every target the CPU has (ChosenTarget::Update with the targets detected)
// and only then applies DisableTargets' mask to what it returns: a query made
// after RestrictDispatchToCpu would send every later kernel call to targets it
// disabled (CAIRN_MAX_TARGET ignored, or a target the CPU cannot run). So the
// choice is reset after each query, and the next dispatch chooses again from
// the restricted set. (hwy::SupportedAndGeneratedTargets calls it too.)
std::vector<int64_t> DispatchableTargets() {
  RestrictDispatchToCpu();
  const int64_t supported = hwy::SupportedTargets() & HWY_TARGETS;
  hwy::GetChosenTarget().DeInit();
  std::vector<int64_t> targets;
  for (int64_t bit : CompiledTargetBits()) {
    if (supported & bit) targets.push_back(bit);
  }
  return targets;
}

}  // namespace

std::string ActiveTargetName() {
  const std::vector<int64_t> targets = DispatchableTargets();
  return hwy::TargetName(targets.empty() ? HWY_STATIC_TARGET : targets.front());
}

std::vector<std::string> CompiledTargetNames() {
  std::vector<std::string> names;
  for (int64_t bit : CompiledTargetBits()) names.push_back(hwy::TargetName(bit));
  return names;
}

std::vector<std::string> RunnableTargetNames() {
  std::vector<std::string> names;
  for (int64_t target : DispatchableTargets()) names.push_back(hwy::TargetName(target));
  return names;
}

}  // namespace cairn::kernels
