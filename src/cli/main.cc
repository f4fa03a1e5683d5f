// cairn: one executable, many subcommands (serve, run, info, tokenize, ...).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "kernels/cpu_features.h"

namespace cairn::cli {
namespace {

struct Entry {
  std::string name;
  int order;
  std::function<void(CLI::App&)> add;
};

std::vector<Entry>& Registry() {
  static std::vector<Entry> entries;
  return entries;
}

int g_exit_code = 0;

}  // namespace

CommandRegistration::CommandRegistration(std::string name, int order, std::function<void(CLI::App&)> add) {
  Registry().push_back(Entry{std::move(name), order, std::move(add)});
}

void SetExitCode(int code) { g_exit_code = code; }

}  // namespace cairn::cli

int main(int argc, char** argv) {
  using cairn::cli::Registry;
  // Before any kernel runs: dispatch only to targets whose every instruction this CPU and OS support.
  cairn::kernels::RestrictDispatchToCpu();
  if (const auto cap = cairn::kernels::DispatchCapFromEnv(); !cap.requested.empty() && !cap.known) {
    std::fprintf(stderr, "cairn: warning: CAIRN_MAX_TARGET=%s is not a compiled x86 target (AVX2, AVX3, AVX3_DL); ignored\n",
                 cap.requested.c_str());
  }
  CLI::App app{"Cairn: a local LLM inference server that never reads the same prompt twice."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "cairn 0.1.0");
  auto& entries = Registry();
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const auto& entry : entries) entry.add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const cairn::Error& e) {
    std::fprintf(stderr, "cairn: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cairn: error: %s\n", e.what());
    return 1;
  }
  return cairn::cli::g_exit_code;
}
