// `cairn cpu`: what this machine offers the kernels: for every compiled x86
// target, each extension and OS register state (XCR0) its code relies on and
// whether it is present, which target dispatch runs, and threads.
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "core/thread_pool.h"
#include "kernels/cpu_features.h"
#include "kernels/targets.h"

namespace cairn::cli {
namespace {

void RunCpu() {
  std::printf("threads (default): %d\n", ThreadPool::DefaultThreadCount());
  std::string compiled;
  for (const auto& name : kernels::CompiledTargetNames()) compiled += name + " ";
  std::printf("kernels compiled for: %s\n", compiled.c_str());

  const auto reports = kernels::DescribeTargetCpuNeeds();
  if (!reports.empty()) std::printf("XCR0 (register states the OS saves): 0x%llx\n", kernels::ReadCpuSnapshot().xcr0);
  for (const auto& report : reports) {
    std::printf("\n%s: %s\n", report.target.c_str(),
                report.runnable ? "runnable"
                : report.highway_supports
                    ? "DISABLED: Highway's check passes, but the code needs what is missing below"
                    : "not runnable");
    std::string line = "  needs:";
    for (const auto& need : report.needs) {
      line += " " + need.name + (need.present ? "" : "(missing)");
      if (line.size() > 96) {
        std::printf("%s\n", line.c_str());
        line = "        ";
      }
    }
    if (line.size() > 8) std::printf("%s\n", line.c_str());
    const std::string missing = report.Missing();
    bool os_state_missing = false;
    for (const auto& need : report.needs) {
      os_state_missing = os_state_missing || (!need.present && need.name.rfind("xcr0:", 0) == 0);
    }
    if (os_state_missing) {
      std::printf("  the OS does not enable a register state this target needs (XCR0); "
                  "the CPU may have the instructions, but they cannot be used here\n");
    }
    if (!missing.empty()) std::printf("  missing: %s\n", missing.c_str());
  }
  if (const auto cap = kernels::DispatchCapFromEnv(); !cap.requested.empty()) {
    std::printf("\nCAIRN_MAX_TARGET=%s: %s\n", cap.requested.c_str(),
                cap.known ? "dispatch is capped at that target" : "not a compiled x86 target; ignored");
  }
  std::printf("\nkernels dispatch to: %s\n", kernels::ActiveTargetName().c_str());
}

const CommandRegistration kRegistration{"cpu", 900, [](CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("cpu", "Print the CPU features and thread count Cairn will use");
  cmd->callback(RunCpu);
}};

}  // namespace
}  // namespace cairn::cli
