// --cache-type-k, shared by the commands that run a model (commands.h).
#include <map>
#include <string>

#include "cli/commands.h"

namespace cairn::cli {

CLI::Option* AddCacheTypeKOption(CLI::App* cmd, bool* k_q8) {
  const std::map<std::string, bool> types = {{"f16", false}, {"q8_0", true}};
  return cmd
      ->add_option("--cache-type-k", *k_q8,
                   "K cache type: f16 (exact, the default) or q8_0 (llama.cpp's Q8_0 K class: half the K "
                   "memory, integer attention scores; docs/kv-cache-q8.md)")
      ->transform(CLI::CheckedTransformer(types, CLI::ignore_case));
}

}  // namespace cairn::cli
