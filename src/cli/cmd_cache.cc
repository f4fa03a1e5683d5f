// `cairn cache ls|clear [--dir D]`: the prefix cache's disk tier without a
// server. ls prints one row per pack file (model, target, records, size,
// problems); clear deletes the pack files unless a server holds the directory.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cache/disk/pack_directory.h"
#include "cli/commands.h"
#include "core/error.h"
#include "engine/cache_tiers.h"

namespace cairn::cli {
namespace {

struct CacheArgs {
  std::string dir;
};

std::string Mib(uint64_t bytes) { return fmt::format("{:.1f}", static_cast<double>(bytes) / (1 << 20)); }

void List(const CacheArgs& args) {
  const std::string dir = args.dir.empty() ? engine::DefaultCacheDir() : args.dir;
  std::string holder;
  const bool in_use = cache::disk::DirectoryInUse(dir, &holder);
  const auto packs = cache::disk::SummarizeDirectory(dir);
  std::printf("cache directory: %s (%s)\n", dir.c_str(),
              in_use ? fmt::format("in use by server pid {}", holder).c_str() : "no server running");
  if (packs.empty()) {
    std::printf("no pack files\n");
    return;
  }
  std::printf("| file | MiB | model id | target | blocks | checkpoints | tombstones | deepest position | problem |\n");
  std::printf("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | --- |\n");
  uint64_t total = 0;
  for (const auto& p : packs) {
    total += p.bytes;
    std::printf("| %s | %s | %s | %s | %lld | %lld | %lld | %lld | %s |\n", p.file.c_str(), Mib(p.bytes).c_str(),
                p.readable ? p.identity.model_id.substr(0, 12).c_str() : "?",
                p.readable ? p.identity.target.c_str() : "?", static_cast<long long>(p.blocks),
                static_cast<long long>(p.checkpoints), static_cast<long long>(p.tombstones),
                static_cast<long long>(p.max_position), p.problem.empty() ? "" : p.problem.c_str());
  }
  std::printf("%zu pack files, %s MiB\n", packs.size(), Mib(total).c_str());
}

void Clear(const CacheArgs& args) {
  const std::string dir = args.dir.empty() ? engine::DefaultCacheDir() : args.dir;
  std::string error;
  const int64_t removed = cache::disk::ClearDirectory(dir, &error);
  if (removed < 0) Fail("{}", error);
  std::printf("removed %lld pack files from %s\n", static_cast<long long>(removed), dir.c_str());
}

const CommandRegistration kRegistration{"cache", 75, [](CLI::App& app) {
  auto args = std::make_shared<CacheArgs>();
  CLI::App* cmd = app.add_subcommand("cache", "Inspect or clear the prefix cache's disk tier (no server needed)");
  cmd->require_subcommand(1);
  CLI::App* ls = cmd->add_subcommand("ls", "List the pack files of a cache directory");
  ls->add_option("--dir", args->dir, "Cache directory (default: the server's default)");
  ls->callback([args] { List(*args); });
  CLI::App* clear = cmd->add_subcommand("clear", "Delete every pack file (refused while a server uses the directory)");
  clear->add_option("--dir", args->dir, "Cache directory (default: the server's default)");
  clear->callback([args] { Clear(*args); });
}};

}  // namespace
}  // namespace cairn::cli
