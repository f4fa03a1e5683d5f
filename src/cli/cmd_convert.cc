// `cairn convert HF_DIR -o FILE.gguf [--quant TYPE] [--no-mtp]`
#include <string>

#include "cli/commands.h"
#include "core/dtype.h"
#include "core/error.h"
#include "model/convert/hf_convert.h"

namespace cairn::cli {
namespace {

struct ConvertArgs {
  std::string hf_dir;
  std::string out;
  std::string quant = "f16";
  bool no_mtp = false;
};

DType ParseMatrixType(const std::string& name) {
  const auto type = ParseDType(name);
  if (!type || (*type != DType::kF32 && *type != DType::kF16 && *type != DType::kBF16 && *type != DType::kQ8_0 &&
                *type != DType::kQ4_0 && *type != DType::kQ4_K && *type != DType::kQ5_K && *type != DType::kQ6_K)) {
    Fail("--quant '{}' is not one of f32, f16, bf16, q8_0, q4_0, q4_k, q5_k, q6_k", name);
  }
  return *type;
}

const CommandRegistration kRegistration{"convert", 60, [](CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Convert a Hugging Face checkpoint (llama, qwen3, qwen3_5) to GGUF, keeping Qwen3.5 MTP weights");
  cmd->add_option("hf_dir", args->hf_dir, "Directory with config.json, *.safetensors and tokenizer files")
      ->required()->check(CLI::ExistingDirectory);
  cmd->add_option("-o,--output", args->out, "Output GGUF file")->required();
  cmd->add_option("--quant", args->quant, "Weight matrix type: f32, f16, bf16, q8_0, q4_0, q4_k, q5_k, q6_k")
      ->capture_default_str();
  cmd->add_flag("--no-mtp", args->no_mtp, "Drop the MTP (nextn) block");
  cmd->callback([args] {
    model::ConvertOptions options;
    options.matrix_type = ParseMatrixType(args->quant);
    options.keep_mtp = !args->no_mtp;
    options.verbose = true;
    model::ConvertHfToGguf(args->hf_dir, args->out, options);
  });
}};

}  // namespace
}  // namespace cairn::cli
