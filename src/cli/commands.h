// Subcommand registry of the `cairn` executable.
//
// Each cmd_<name>.cc defines one subcommand and registers it with a file-scope
//   const CommandRegistration kRegistration{"name", order, [](CLI::App& app) {...}};
// The lambda adds the subcommand (options, help text, callback) to `app`.
// Callbacks report failure by throwing cairn::Error (printed as "cairn: error: ...",
// exit status 1) or by calling SetExitCode().
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace cairn::cli {

struct CommandRegistration {
  // `order` sorts subcommands in --help (lower first).
  CommandRegistration(std::string name, int order, std::function<void(CLI::App&)> add);
};

void SetExitCode(int code);

// Adds --cache-type-k f16|q8_0 to `cmd`, storing q8_0 as *k_q8 = true (cache_type_option.cc).
CLI::Option* AddCacheTypeKOption(CLI::App* cmd, bool* k_q8);

}  // namespace cairn::cli
