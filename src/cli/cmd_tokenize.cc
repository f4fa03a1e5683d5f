// `cairn tokenize --model FILE.gguf (--text T | --file F) [--special]` prints
// token ids; `cairn detokenize --model FILE.gguf --ids "1 2 3"` prints text.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"

namespace cairn::cli {
namespace {

struct TokenizeArgs {
  std::string model;
  std::string text;
  std::string file;
  bool special = false;
  bool add_bos = false;
};

struct DetokenizeArgs {
  std::string model;
  std::string ids;
  bool special = false;
};

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("cannot open '{}'", path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void RunTokenize(const TokenizeArgs& args) {
  const tokenizer::Tokenizer tok(tokenizer::LoadGgufVocabulary(args.model));
  const std::string text = args.file.empty() ? args.text : ReadWholeFile(args.file);
  const auto ids = tok.Encode(text, args.special, args.add_bos);
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) line += ' ';
    line += std::to_string(ids[i]);
  }
  std::printf("%s\n", line.c_str());
}

std::vector<tokenizer::TokenId> ParseIds(const std::string& text) {
  std::vector<tokenizer::TokenId> ids;
  std::string item;
  // Accept "1 2 3", "1,2,3" and "[1, 2, 3]".
  std::string cleaned = text;
  for (char& c : cleaned) {
    if (c == ',' || c == '[' || c == ']') c = ' ';
  }
  std::istringstream items(cleaned);
  while (items >> item) {
    size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || value < 0 || value > INT32_MAX) {
      Fail("--ids: '{}' is not a token id", item);
    }
    ids.push_back(static_cast<tokenizer::TokenId>(value));
  }
  return ids;
}

void RunDetokenize(const DetokenizeArgs& args) {
  const tokenizer::Tokenizer tok(tokenizer::LoadGgufVocabulary(args.model));
  const auto ids = ParseIds(args.ids);
  for (tokenizer::TokenId id : ids) {
    if (static_cast<size_t>(id) >= tok.size()) {
      Fail("--ids: token id {} is out of range (the vocabulary has {} tokens)", id, tok.size());
    }
  }
  const std::string text = tok.Decode(ids, args.special);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::printf("\n");
}

const CommandRegistration kTokenize{"tokenize", 310, [](CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Print the token ids of a text (space-separated)");
  cmd->add_option("-m,--model", args->model, "GGUF model or vocab file")
      ->required()
      ->check(CLI::ExistingFile);
  auto* text = cmd->add_option("-t,--text", args->text, "Text to tokenize");
  auto* file = cmd->add_option("-f,--file", args->file, "File whose bytes to tokenize")
                   ->check(CLI::ExistingFile);
  text->excludes(file);
  file->excludes(text);
  cmd->add_flag("--special", args->special,
                "Parse special tokens in the text (<|im_start|> becomes its id)");
  cmd->add_flag("--add-bos", args->add_bos, "Add BOS/EOS as the vocabulary asks for a prompt");
  cmd->callback([args, text, file] {
    if (text->count() == 0 && file->count() == 0) Fail("give the input with --text or --file");
    RunTokenize(*args);
  });
}};

const CommandRegistration kDetokenize{"detokenize", 311, [](CLI::App& app) {
  auto args = std::make_shared<DetokenizeArgs>();
  CLI::App* cmd = app.add_subcommand("detokenize", "Print the text of token ids");
  cmd->add_option("-m,--model", args->model, "GGUF model or vocab file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-i,--ids", args->ids, "Token ids: \"1 2 3\", \"1,2,3\" or \"[1, 2, 3]\"")
      ->required();
  cmd->add_flag("--special", args->special, "Show control tokens (<|im_end|>) as text");
  cmd->callback([args] { RunDetokenize(*args); });
}};

}  // namespace
}  // namespace cairn::cli
