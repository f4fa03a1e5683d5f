// `cairn mkmodel --arch A --preset P [--quant T] [--mtp] --seed N -o FILE.gguf`
#include <string>

#include "cli/commands.h"
#include "core/dtype.h"
#include "core/error.h"
#include "model/convert/random_model.h"

namespace cairn::cli {
namespace {

struct MkmodelArgs {
  model::RandomModelOptions options;
  std::string quant = "q8_0";
  std::string out;
};

std::string DefaultTokenizerDir() {
  if (const char* env = std::getenv("CAIRN_SHARED_DIR")) return std::string(env) + "/testdata/qwen3-tokenizer";
  return CAIRN_DEFAULT_SHARED_DIR "/testdata/qwen3-tokenizer";
}

const CommandRegistration kRegistration{"mkmodel", 70, [](CLI::App& app) {
  auto args = std::make_shared<MkmodelArgs>();
  args->options.tokenizer_dir = DefaultTokenizerDir();
  std::string presets;
  for (const std::string& line : model::RandomModelPresets()) presets += "\n  " + line;
  CLI::App* cmd = app.add_subcommand(
      "mkmodel", "Write a random-initialised model at a real published shape (with the Qwen3 tokenizer)");
  cmd->footer("Presets:" + presets);
  cmd->add_option("--arch", args->options.arch, "llama | qwen3 | qwen35 | gemma3")->capture_default_str();
  cmd->add_option("--preset", args->options.preset, "Shape preset (see below)")->capture_default_str();
  cmd->add_option("--quant", args->quant, "Weight matrix type: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_xs")
      ->capture_default_str();
  cmd->add_flag("--mtp", args->options.mtp, "Add a Qwen3.5 MTP (nextn) block");
  cmd->add_option("--seed", args->options.seed, "Random seed")->capture_default_str();
  cmd->add_option("--tokenizer", args->options.tokenizer_dir,
                  "Hugging Face tokenizer directory (tokenizer.json, tokenizer_config.json)")
      ->capture_default_str();
  cmd->add_option("--threads", args->options.threads, "Threads (0 = all cores)")->capture_default_str();
  cmd->add_option("-o,--output", args->out, "Output GGUF file")->required();
  cmd->callback([args] {
    const auto type = ParseDType(args->quant);
    if (!type) Fail("--quant '{}' is not a known type", args->quant);
    args->options.matrix_type = *type;
    model::WriteRandomModel(args->options, args->out);
  });
}};

}  // namespace
}  // namespace cairn::cli
