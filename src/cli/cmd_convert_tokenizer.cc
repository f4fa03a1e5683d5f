// `cairn convert-tokenizer tokenizer.json [tokenizer_config.json] -o vocab.gguf`:
// imports a Hugging Face tokenizer into a vocab-only GGUF (tokenizer.* keys).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/hf_import.h"
#include "tokenizer/tokenizer.h"

namespace cairn::cli {
namespace {

struct ConvertTokenizerArgs {
  std::string tokenizer_json;
  std::string config_json;
  std::string out;
};

void RunConvertTokenizer(const ConvertTokenizerArgs& args) {
  tokenizer::Vocabulary vocab =
      tokenizer::LoadHfTokenizerFiles(args.tokenizer_json, args.config_json);
  // Building the tokenizer validates everything (ids, merges, pre-tokenizer)
  // before a file is written.
  { const tokenizer::Tokenizer check(vocab); }
  gguf::GgufWriter writer;
  writer.Set("general.architecture", gguf::Value::String("vocab"));
  writer.Set("general.name", gguf::Value::String("tokenizer converted by cairn"));
  tokenizer::WriteVocabularyToGguf(vocab, writer);
  writer.WriteFile(args.out);
  std::printf("wrote %s: %zu tokens, %zu merges, model=%s pre=%s eos=%d eot=%d pad=%d%s\n",
              args.out.c_str(), vocab.size(), vocab.merges.size(),
              std::string(tokenizer::ModelKindName(vocab.model)).c_str(), vocab.pre.c_str(),
              vocab.eos, vocab.eot, vocab.pad,
              vocab.chat_template.empty() ? "" : ", with chat template");
}

const CommandRegistration kRegistration{"convert-tokenizer", 65, [](CLI::App& app) {
  auto args = std::make_shared<ConvertTokenizerArgs>();
  CLI::App* cmd = app.add_subcommand(
      "convert-tokenizer", "Convert a Hugging Face tokenizer.json (+ tokenizer_config.json) to a "
                           "vocab-only GGUF");
  cmd->add_option("tokenizer_json", args->tokenizer_json, "tokenizer.json")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("tokenizer_config", args->config_json,
                  "tokenizer_config.json (special tokens, add_bos_token, chat_template)")
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args->out, "Output GGUF file")->required();
  cmd->callback([args] { RunConvertTokenizer(*args); });
}};

}  // namespace
}  // namespace cairn::cli
