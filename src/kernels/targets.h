// Which SIMD instruction sets the kernels were compiled for and which one runs.
#pragma once

#include <string>
#include <vector>

namespace cairn::kernels {

// Name of the Highway target that dynamic dispatch selects on this CPU
// (e.g. "AVX2", "AVX3", "AVX3_DL", "NEON", "EMU128").
std::string ActiveTargetName();

// Every target compiled into this binary, best first.
std::vector<std::string> CompiledTargetNames();

// Targets that are both compiled and supported by this CPU (tests run each).
std::vector<std::string> RunnableTargetNames();

}  // namespace cairn::kernels
