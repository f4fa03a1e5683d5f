// `cairn race --model FILE --prompt T [--modes lookup,mtp,draft,baseline]
//  [--draft-model F] [-n N] [--temp 0] [--cap K]`
// Runs each decoding mode on the same prompt and compares token ids with plain
// decoding; exit status 1 on any divergence (spec/race.h).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "model/model.h"
#include "spec/draft_model_drafter.h"
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
  int64_t draft_vocab = -1;
  float draft_margin = -1.0f;
  std::string draft_quant = "auto";
  int n = 64;
  float temp = 0.0f;
  int cap = 4;
  int threads = 0;
  uint64_t seed = 1;
  bool ignore_eos = false;
  std::string prompt_file;
  int repeat = 1;
};

// Share of rounds that accepted at least i drafts, i = 1..cap: acceptance per
// draft position (position i is only reached when drafts 1..i-1 were accepted).
std::string AcceptanceByPosition(const spec::SpecStats& stats) {
  if (stats.rounds == 0 || stats.accept_histogram.size() < 2) return "";
  std::string out = "accepted >= i drafts:";
  for (size_t i = 1; i < stats.accept_histogram.size(); ++i) {
    int64_t at_least = 0;
    for (size_t j = i; j < stats.accept_histogram.size(); ++j) at_least += stats.accept_histogram[j];
    out += fmt::format(" {}:{:.0f}%", i, 100.0 * static_cast<double>(at_least) / static_cast<double>(stats.rounds));
  }
  return out;
}

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
  if (!args.draft_model.empty()) {
    model::Model::LoadOptions load;
    load.narrow_to = spec::DraftNarrowType(args.draft_quant);
    const Stopwatch watch;
    draft = model::Model::Load(args.draft_model, load);
    std::printf("draft model loaded in %.2fs\n", watch.Seconds());
  }
  const tokenizer::Tokenizer tok(tokenizer::LoadGgufVocabulary(args.model));
  std::string text = args.prompt;
  if (!args.prompt_file.empty()) {
    std::ifstream in(args.prompt_file, std::ios::binary);
    if (!in) Fail("cannot read --prompt-file {}", args.prompt_file);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::vector<int32_t> prompt = tok.Encode(text, /*parse_special=*/true, /*add_special=*/true);
  if (prompt.empty()) Fail("--prompt / --prompt-file: give a prompt that encodes to at least one token");
  ThreadPool pool(args.threads > 0 ? args.threads : static_cast<int>(std::thread::hardware_concurrency()));

  spec::RaceOptions o;
  o.modes = ParseModes(args.modes);
  o.max_tokens = args.n;
  o.temperature = args.temp;
  o.seed = args.seed;
  o.cap = args.cap;
  o.target_path = args.model;
  o.draft_model = draft.get();
  o.draft_options.head_vocab = args.draft_vocab;
  o.draft_options.stop_margin = args.draft_margin;
  if (!args.ignore_eos) {
    for (int32_t id = 0; id < target->n_vocab(); ++id) {
      if (tok.IsEndOfGeneration(id)) o.stop_tokens.push_back(id);
    }
  }
  // --repeat R: R races back to back (each runs the baseline, then every mode),
  // so baseline and speculative arms alternate in one process; the summary
  // gives each mode's median speedup over the baseline of its own race.
  std::map<std::string, std::vector<double>> speedups;
  std::vector<spec::RaceArm> arms;
  for (int r = 0; r < std::max(1, args.repeat); ++r) {
    arms = spec::RunRace(*target, prompt, o, pool);
    const double base = arms[0].stats.tokens_per_second();
    for (const spec::RaceArm& arm : arms) {
      if (arm.mode != spec::SpecMode::kBaseline && base > 0) {
        speedups[spec::SpecModeName(arm.mode)].push_back(arm.stats.tokens_per_second() / base);
      }
    }
    if (args.repeat > 1) std::fprintf(stderr, "race %d/%d done\n", r + 1, args.repeat);
  }
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
  for (const spec::RaceArm& arm : arms) {
    std::printf("  %s\n", arm.stats.Summary().c_str());
    const std::string by_position = AcceptanceByPosition(arm.stats);
    if (!by_position.empty()) std::printf("    %s\n", by_position.c_str());
  }
  if (args.repeat > 1) {
    for (auto& [mode, ratios] : speedups) {
      std::sort(ratios.begin(), ratios.end());
      std::printf("%s: median speedup %.2fx over %zu alternated races (min %.2fx, max %.2fx)\n", mode.c_str(),
                  ratios[ratios.size() / 2], ratios.size(), ratios.front(), ratios.back());
    }
  }
  if (diverged) SetExitCode(1);
}

const CommandRegistration kRegistration{"race", 60, [](CLI::App& app) {
  auto args = std::make_shared<RaceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "race", "Run decoding modes on one prompt; compare outputs with plain decoding (exit 1 on divergence)");
  cmd->add_option("--model", args->model, "Target model (GGUF)")->required();
  CLI::Option* text = cmd->add_option("--prompt", args->prompt, "Prompt text");
  cmd->add_option("--prompt-file", args->prompt_file, "Read the prompt from a file")->excludes(text);
  cmd->add_option("--repeat", args->repeat, "Races to run back to back (median speedup over them)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--modes", args->modes, "Comma-separated: baseline, lookup, draft, mtp, auto")
      ->capture_default_str();
  cmd->add_option("--draft-model", args->draft_model, "Draft model (same vocabulary) for mode 'draft'");
  cmd->add_option("--draft-vocab", args->draft_vocab,
                  "Token ids the draft's LM head scores (0 = all; -1 = auto: 65536 for vocabularies >= 100000)")
      ->capture_default_str();
  cmd->add_option("--draft-margin", args->draft_margin,
                  "Stop drafting after a draft whose top-2 logit gap is below this (0 = never; -1 = auto: 2.0)")
      ->capture_default_str();
  cmd->add_option("--draft-quant", args->draft_quant, "Draft matrices wider than this type are re-encoded to it at load (auto = q4_0; none = keep)")
      ->capture_default_str();
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
