// `cairn cpu`: what this machine offers the kernels (ISA targets, threads).
#include <cstdio>
#include <thread>

#include "cli/commands.h"
#include "core/thread_pool.h"
#include "kernels/targets.h"

namespace cairn::cli {
namespace {

void RunCpu() {
  std::printf("threads (default): %d\n", ThreadPool::DefaultThreadCount());
#if defined(__x86_64__)
  __builtin_cpu_init();
  std::printf("x86-64: avx2=%d fma=%d avx512f=%d avx512bw=%d avx512vnni=%d avx512bf16=%d\n",
              __builtin_cpu_supports("avx2"), __builtin_cpu_supports("fma"),
              __builtin_cpu_supports("avx512f"), __builtin_cpu_supports("avx512bw"),
              __builtin_cpu_supports("avx512vnni"), __builtin_cpu_supports("avx512bf16"));
#endif
  std::string compiled;
  for (const auto& name : kernels::CompiledTargetNames()) compiled += name + " ";
  std::printf("kernels compiled for: %s\n", compiled.c_str());
  std::printf("kernels dispatch to: %s\n", kernels::ActiveTargetName().c_str());
}

const CommandRegistration kRegistration{"cpu", 900, [](CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("cpu", "Print the CPU features and thread count Cairn will use");
  cmd->callback(RunCpu);
}};

}  // namespace
}  // namespace cairn::cli
