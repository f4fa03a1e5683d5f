// `cairn race --model FILE --prompt T [--modes lookup,mtp,draft,baseline]
//  [--draft-model F] [-n N] [--temp 0] [--cap K]`
// Runs each decoding mode on the same prompt and compares token ids with plain
// decoding; exit status 1 on any divergence (spec/race.h).
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "model/model.h"
#include "spec/race.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"

namespace cairn::cli {
namespace {

struct RaceArgs {
  std::string model;
  std::string prompt;
  std::string modes = "baseline,lookup";
  std::string draft_model;
  int n = 64;
  float temp = 0.0f;
  int cap = 4;
  int threads = 0;
  uint64_t seed = 1;
  bool ignore_eos = false;
};

std::vector<spec::SpecMode> ParseModes(const std::string& list) {
  std::vector<spec::SpecMode> modes;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto mode = spec::ParseSpecMode(item);
    if (!mode) Fail("--modes: unknown mode '{}' (baseline, lookup, draft, mtp, auto)", item);
    modes.push_back(*mode);
  }
  return modes;
}

void RunRace(const RaceArgs& args) {
  const auto target = model::Model::Load(args.model);
  std::unique_ptr<model::Model> draft;
  if (!args.draft_model.empty()) draft = model::Model::Load(args.draft_model);
  const tokenizer::Tokenizer tok(tokenizer::LoadGgufVocabulary(args.model));
  const std::vector<int32_t> prompt = tok.Encode(args.prompt, /*parse_special=*/true, /*add_special=*/true);
  if (prompt.empty()) Fail("--prompt encodes to no tokens");
  ThreadPool pool(args.threads > 0 ? args.threads : static_cast<int>(std::thread::hardware_concurrency()));

  spec::RaceOptions o;
  o.modes = ParseModes(args.modes);
  o.max_tokens = args.n;
  o.temperature = args.temp;
  o.seed = args.seed;
  o.cap = args.cap;
  o.target_path = args.model;
  o.draft_model = draft.get();
  if (!args.ignore_eos) {
    for (int32_t id = 0; id < target->n_vocab(); ++id) {
      if (tok.IsEndOfGeneration(id)) o.stop_tokens.push_back(id);
    }
  }
  const std::vector<spec::RaceArm> arms = spec::RunRace(*target, prompt, o, pool);
  std::printf("prompt: %zu tokens; %d tokens per mode; temperature %g; cap %s\n", prompt.size(), args.n,
              static_cast<double>(args.temp), args.cap > 0 ? std::to_string(args.cap).c_str() : "adaptive");
  std::printf("%-9s %9s %9s %11s %8s  %s\n", "mode", "tokens", "tok/s", "commit/rnd", "accept", "vs baseline");
  bool diverged = false;
  const double base_rate = arms[0].stats.tokens_per_second();
  for (const spec::RaceArm& arm : arms) {
    std::string verdict;
    if (arm.mode == spec::SpecMode::kBaseline) {
      verdict = "(reference)";
    } else if (arm.identical) {
      verdict = fmt::format("identical, {:.2f}x", base_rate > 0 ? arm.stats.tokens_per_second() / base_rate : 0.0);
    } else {
      diverged = true;
      verdict = fmt::format("DIVERGES at {}: baseline {} vs {} (target logit margin {:.4g})", arm.divergence,
                            arm.baseline_token, arm.arm_token, static_cast<double>(arm.margin));
    }
    std::printf("%-9s %9zu %9.1f %11.2f %7.1f%%  %s\n", spec::SpecModeName(arm.mode).c_str(), arm.tokens.size(),
                arm.stats.tokens_per_second(), arm.stats.mean_committed_per_round(),
                100.0 * arm.stats.acceptance_rate(), verdict.c_str());
  }
  for (const spec::RaceArm& arm : arms) std::printf("  %s\n", arm.stats.Summary().c_str());
  if (diverged) SetExitCode(1);
}

const CommandRegistration kRegistration{"race", 60, [](CLI::App& app) {
  auto args = std::make_shared<RaceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "race", "Run decoding modes on one prompt; compare outputs with plain decoding (exit 1 on divergence)");
  cmd->add_option("--model", args->model, "Target model (GGUF)")->required();
  cmd->add_option("--prompt", args->prompt, "Prompt text")->required();
  cmd->add_option("--modes", args->modes, "Comma-separated: baseline, lookup, draft, mtp, auto")
      ->capture_default_str();
  cmd->add_option("--draft-model", args->draft_model, "Draft model (same vocabulary) for mode 'draft'");
  cmd->add_option("-n", args->n, "Tokens to generate per mode")->capture_default_str();
  cmd->add_option("--temp", args->temp, "Temperature (0 = greedy; outputs compared only make sense at 0)")
      ->capture_default_str();
  cmd->add_option("--cap", args->cap, "Drafts per round; 0 = adaptive (measured verify curve)")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Sampling seed")->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads (0 = all cores)")->capture_default_str();
  cmd->add_flag("--ignore-eos", args->ignore_eos, "Do not stop at end-of-generation tokens");
  cmd->callback([args] { RunRace(*args); });
}};

}  // namespace
}  // namespace cairn::cli
