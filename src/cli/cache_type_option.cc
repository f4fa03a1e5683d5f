// --cache-type-k, shared by the commands that run a model (commands.h).
#include <string>

#include "cli/commands.h"

namespace cairn::cli {

CLI::Option* AddCacheTypeKOption(CLI::App* cmd, bool* k_q8) {
  return cmd
      ->add_option_function<std::string>(
          "--cache-type-k", [k_q8](const std::string& type) { *k_q8 = type == "q8_0" || type == "Q8_0"; },
          "K cache type: f16 (exact, the default) or q8_0 (llama.cpp's Q8_0 K class: half the K memory, "
          "integer attention scores; docs/kv-cache-q8.md)")
      ->check(CLI::IsMember({"f16", "F16", "q8_0", "Q8_0"}))
      ->type_name("f16|q8_0")
      ->default_str(*k_q8 ? "q8_0" : "f16");
}

}  // namespace cairn::cli
