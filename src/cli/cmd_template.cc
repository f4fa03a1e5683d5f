// `cairn template`: render a chat template for a conversation and print the
// prompt, e.g. to diff against transformers' apply_chat_template.
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "chat/template.h"
#include "cli/commands.h"
#include "core/error.h"
#include "gguf/gguf_file.h"

namespace cairn::cli {
namespace {

using Json = nlohmann::ordered_json;

struct TemplateArgs {
  std::string template_path;
  std::string model_path;
  std::string messages_path;
  std::string tools_path;
  std::string kwargs_path;
  bool add_generation_prompt = false;
  std::optional<std::string> bos;
  std::optional<std::string> eos;
};

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("cannot open '{}'", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Json ReadJson(const std::string& path) {
  try {
    return Json::parse(ReadText(path));
  } catch (const Json::parse_error& e) {
    Fail("'{}' is not valid JSON: {}", path, e.what());
  }
}

// Token text for a special-token id key, or "" when the model lacks it.
std::string SpecialToken(const gguf::GgufFile& file, std::string_view id_key) {
  const gguf::Value* id = file.Find(id_key);
  const gguf::Value* tokens = file.Find("tokenizer.ggml.tokens");
  if (id == nullptr || tokens == nullptr) return "";
  uint64_t index = id->AsU64();
  const auto& strings = tokens->AsStrings();
  return index < strings.size() ? strings[index] : "";
}

void RunTemplate(const TemplateArgs& args) {
  if (args.template_path.empty() == args.model_path.empty()) {
    Fail("give exactly one of --template FILE.jinja or --model FILE.gguf");
  }
  std::string source;
  std::string bos = args.bos.value_or("");
  std::string eos = args.eos.value_or("");
  if (!args.model_path.empty()) {
    auto file = gguf::GgufFile::Open(args.model_path);
    source = file->GetString("tokenizer.chat_template");
    if (!args.bos) bos = SpecialToken(*file, "tokenizer.ggml.bos_token_id");
    if (!args.eos) eos = SpecialToken(*file, "tokenizer.ggml.eos_token_id");
  } else {
    source = ReadText(args.template_path);
  }
  chat::Template tmpl = chat::Template::Parse(source);
  Json messages = ReadJson(args.messages_path);
  if (messages.is_object() && messages.contains("messages")) messages = messages["messages"];
  if (!messages.is_array()) Fail("--messages must hold a JSON array of messages");
  Json tools = args.tools_path.empty() ? Json() : ReadJson(args.tools_path);
  Json kwargs = args.kwargs_path.empty() ? Json::object() : ReadJson(args.kwargs_path);
  if (!kwargs.is_object()) Fail("--kwargs must hold a JSON object");
  std::string prompt =
      chat::RenderChat(tmpl, messages, tools, args.add_generation_prompt, bos, eos, kwargs);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
}

const CommandRegistration kRegistration{"template", 300, [](CLI::App& app) {
  auto args = std::make_shared<TemplateArgs>();
  CLI::App* cmd = app.add_subcommand("template", "Render a chat template for a conversation");
  cmd->add_option("--template", args->template_path, "Jinja chat template file");
  cmd->add_option("--model", args->model_path, "GGUF model; uses its tokenizer.chat_template");
  cmd->add_option("--messages", args->messages_path, "JSON array of messages")->required();
  cmd->add_option("--tools", args->tools_path, "JSON array of tool definitions");
  cmd->add_option("--kwargs", args->kwargs_path, "JSON object of extra template variables");
  cmd->add_flag("--add-generation-prompt", args->add_generation_prompt,
                "Append the assistant generation prompt");
  cmd->add_option_function<std::string>("--bos", [args](const std::string& v) { args->bos = v; },
                                        "bos_token text (default: from --model, else empty)");
  cmd->add_option_function<std::string>("--eos", [args](const std::string& v) { args->eos = v; },
                                        "eos_token text (default: from --model, else empty)");
  cmd->callback([args] { RunTemplate(*args); });
}};

}  // namespace
}  // namespace cairn::cli
