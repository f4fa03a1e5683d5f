// `cairn run`: generate from a prompt, or chat interactively, on a local model.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "engine/default_model.h"
#include "engine/engine.h"

namespace cairn::cli {
namespace {

struct RunArgs {
  engine::EngineOptions engine;
  std::string prompt;
  bool raw = false;          // completion instead of chat
  bool print_ids = false;
  bool no_thinking = false;
  std::string system;
  engine::GenerationOptions gen;
};

void PrintStats(const engine::GenerationResult& r) {
  const double tps = r.decode_seconds > 0 ? static_cast<double>(r.completion_tokens) / r.decode_seconds : 0;
  std::string spec = r.spec.value("mode", std::string("baseline"));
  if (spec != "baseline" && r.spec.contains("mean_committed_per_round")) {
    spec += fmt::format(" {:.2f}/round", r.spec["mean_committed_per_round"].get<double>());
  }
  std::fprintf(stderr,
               "\n[%lld prompt tokens, %lld cached (%s) | TTFT %.3f s | %lld tokens at %.1f tok/s (%s) | %s]\n",
               static_cast<long long>(r.prompt_tokens), static_cast<long long>(r.cached_tokens),
               r.cache.value("kind", std::string("miss")).c_str(), r.ttft_seconds,
               static_cast<long long>(r.completion_tokens), tps, spec.c_str(), r.finish_reason.c_str());
}

engine::GenerationResult Turn(engine::Engine& e, const engine::GenerationInput& input, const RunArgs& args) {
  bool in_reasoning = false;
  auto on_delta = [&](const engine::GenerationDelta& d) {
    if (!d.reasoning.empty()) {
      if (!in_reasoning && isatty(STDOUT_FILENO)) std::fputs("\033[2m", stdout);
      in_reasoning = true;
      std::fputs(d.reasoning.c_str(), stdout);
    }
    if (!d.content.empty()) {
      if (in_reasoning && isatty(STDOUT_FILENO)) std::fputs("\033[0m", stdout);
      in_reasoning = false;
      std::fputs(d.content.c_str(), stdout);
    }
    std::fflush(stdout);
    return true;
  };
  engine::GenerationResult r = e.Generate(input, args.gen, on_delta, nullptr);
  if (in_reasoning && isatty(STDOUT_FILENO)) std::fputs("\033[0m", stdout);
  std::fputs("\n", stdout);
  return r;
}

void Run(RunArgs& args) {
  if (args.engine.model_path.empty()) {
    const engine::DefaultModel chosen = engine::ChooseDefaultModel();
    args.engine.model_path = chosen.path;
    std::fprintf(stderr, "%s\n", chosen.note.c_str());
    if (args.engine.draft_model_path.empty()) {
      args.engine.draft_model_path = engine::DefaultDraftModelPath(args.engine.model_path);
    }
  }
  args.engine.verbose = true;
  auto e = engine::Engine::Create(args.engine);
  engine::GenerationInput base;
  if (args.no_thinking) base.template_kwargs["enable_thinking"] = false;
  if (!args.prompt.empty()) {
    engine::GenerationInput input = base;
    if (args.raw) {
      input.prompt = args.prompt;
    } else {
      engine::Json messages = engine::Json::array();
      if (!args.system.empty()) messages.push_back({{"role", "system"}, {"content", args.system}});
      messages.push_back({{"role", "user"}, {"content", args.prompt}});
      input.messages = messages;
    }
    args.gen.logprobs = args.print_ids;
    engine::GenerationResult r = Turn(*e, input, args);
    if (args.print_ids) {
      std::string ids;
      for (const auto& lp : r.logprobs) ids += (ids.empty() ? "" : " ") + std::to_string(lp.id);
      std::printf("ids: %s\n", ids.c_str());
    }
    PrintStats(r);
    return;
  }
  // Interactive chat: history grows; the prefix cache makes each turn cheap.
  engine::Json messages = engine::Json::array();
  if (!args.system.empty()) messages.push_back({{"role", "system"}, {"content", args.system}});
  std::fprintf(stderr, "cairn: chatting with %s (Ctrl-D to quit)\n", args.engine.model_path.c_str());
  std::string line;
  while (true) {
    std::fputs("> ", stdout);
    std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (line.empty()) continue;
    messages.push_back({{"role", "user"}, {"content", line}});
    engine::GenerationInput input = base;
    input.messages = messages;
    engine::GenerationResult r = Turn(*e, input, args);
    PrintStats(r);
    engine::Json reply = {{"role", "assistant"}, {"content", r.content}};
    if (!r.reasoning.empty()) reply["reasoning_content"] = r.reasoning;
    messages.push_back(reply);
  }
}

const CommandRegistration kRegistration{"run", 20, [](CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  args->gen.max_tokens = 256;
  CLI::App* cmd = app.add_subcommand("run", "Generate from a prompt, or chat interactively (streams tokens; shows TTFT, "
                                            "tok/s and cached tokens per turn)");
  cmd->add_option("-m,--model", args->engine.model_path, "GGUF model (default: the embedded default model)");
  cmd->add_option("-p,--prompt", args->prompt, "Prompt (without it: interactive chat)");
  cmd->add_flag("--raw", args->raw, "Use the prompt as raw text (no chat template)");
  cmd->add_option("--system", args->system, "System message");
  cmd->add_option("-n,--max-tokens", args->gen.max_tokens, "Tokens to generate at most")->capture_default_str();
  cmd->add_option("--temp", args->gen.temperature, "Temperature (0 = greedy)")->capture_default_str();
  cmd->add_option("--top-p", args->gen.top_p, "Nucleus sampling mass")->capture_default_str();
  cmd->add_option("--top-k", args->gen.top_k, "Top-k (0 = off)")->capture_default_str();
  cmd->add_option("--seed", args->gen.seed, "Sampling seed");
  cmd->add_option("--stop", args->gen.stop, "Stop string (repeatable)");
  cmd->add_flag("--ignore-eos", args->gen.ignore_eos, "Keep generating past end-of-generation tokens");
  cmd->add_flag("--ids", args->print_ids, "Also print the generated token ids (for scripts)");
  cmd->add_flag("--no-thinking", args->no_thinking, "Pass enable_thinking=false to the chat template");
  cmd->add_option("--ctx", args->engine.context, "Context window in tokens (0 = model default, capped at 65536)");
  cmd->add_option("-t,--threads", args->engine.threads, "Threads (0 = all cores)");
  AddCacheTypeKOption(cmd, &args->engine.k_q8);
  cmd->add_flag("--no-prefix-cache", [args](int64_t) { args->engine.prefix_cache = false; }, "Disable the prefix cache");
  cmd->add_option("--spec", args->engine.spec_mode, "Speculative mode: lookup|draft|mtp|baseline|auto")
      ->capture_default_str();
  cmd->add_option("--draft-model", args->engine.draft_model_path, "Draft model for --spec draft");
  cmd->add_option("--draft-quant", args->engine.draft_quant,
                  "Draft matrices wider than this type are re-encoded to it at load (auto = q4_0; none = keep)")
      ->capture_default_str();
  cmd->callback([args] { Run(*args); });
}};

}  // namespace
}  // namespace cairn::cli
