// `cairn bench --model FILE [--prompt-tokens 512,4096] [--depths 0,4096]
//              [--decode-tokens N] [--threads N] [--profile]
//              [--depth-fill prefill|copy] [--fill-prompt-tokens N]
//              [--paired-steps N] [--paired-probe-gb GB]`
// Prefill and decode throughput of a model against this machine's measured
// read bandwidth (decode ceiling = bandwidth / bytes read per token), with an
// optional per-category time split. Prints Markdown tables on stdout.
// `--depth-fill copy` reaches decode depths by prefilling only N tokens and
// replicating their KV blocks (model/bench/model_bench.h); the output says so.
// The paired column times more decode steps, each between two bandwidth
// passes, and divides each step's read rate by the bandwidth of its own
// neighbouring passes (model_bench.h, BenchOptions::probe): on a shared
// machine whose bandwidth drifts by tens of percent from minute to minute,
// that ratio is the one to compare.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "core/profiler.h"
#include "core/thread_pool.h"
#include "kernels/targets.h"
#include "model/bench/memory_probe.h"
#include "model/bench/model_bench.h"
#include "model/model.h"

namespace cairn::cli {
namespace {

namespace bench = model::bench;

struct BenchArgs {
  std::string model_path;
  std::vector<int64_t> prompt_tokens = {512, 4096};
  std::vector<int64_t> depths = {0, 4096};
  int64_t decode_tokens = 32;
  int64_t chunk_tokens = 256;
  std::string depth_fill = "prefill";
  int64_t fill_prompt_tokens = 1024;
  int threads = 0;
  bool profile = false;
  bool k_q8 = false;
  double bandwidth_gb = 1.0;   // GB (1e9 bytes) summed per bandwidth pass
  int bandwidth_passes = 5;
  int64_t paired_steps = 16;
  double paired_probe_gb = 0.25;
  uint64_t seed = 1;
  std::string narrow_to;  // "" = the file's types
};

constexpr double kMB = 1e6;

void PrintPhase(const char* what, int64_t tokens) {
  if (tokens > 0) {
    std::fprintf(stderr, "bench: %s %lld tokens (load %.1f)\n", what, static_cast<long long>(tokens),
                 bench::LoadAverage1());
  } else {
    std::fprintf(stderr, "bench: %s (load %.1f)\n", what, bench::LoadAverage1());
  }
}

// Decode: effective read rate of the layer matrices and of the output head
// while their kernels ran (calling-thread CPU time; exact with --threads 1).
void PrintDecodeRates(const std::vector<const bench::PhaseTiming*>& phases, size_t layer_matrix_bytes,
                      size_t head_bytes) {
  std::printf("| layer matmul GB/s (layer weights / matmul CPU time) |");
  for (const bench::PhaseTiming* p : phases) {
    const double s = p->profile[prof::kMatMul].cpu_seconds;
    std::printf(" %.1f |", s > 0 ? static_cast<double>(layer_matrix_bytes) * p->tokens / s / 1e9 : 0.0);
  }
  std::printf("\n| head GB/s (output matrix / embed+logits CPU time) |");
  for (const bench::PhaseTiming* p : phases) {
    const double s = p->profile[prof::kEmbedLogits].cpu_seconds;
    std::printf(" %.1f |", s > 0 ? static_cast<double>(head_bytes) * p->tokens / s / 1e9 : 0.0);
  }
  std::printf("\n");
}

// One profile column per phase: share of the phase's wall time per category.
void PrintProfile(const char* title, const std::vector<std::string>& names,
                  const std::vector<const bench::PhaseTiming*>& phases, bool decode, size_t layer_matrix_bytes,
                  size_t head_bytes) {
  std::printf("\n%s: share of the calling thread's CPU time (CPU ms per token) / share of wall time\n\n"
              "| category |", title);
  for (const std::string& n : names) std::printf(" %s |", n.c_str());
  std::printf("\n| --- |");
  for (size_t i = 0; i < names.size(); ++i) std::printf(" --- |");
  std::printf("\n");
  // seconds_of(phase) returns {cpu seconds, wall seconds}.
  auto row = [&](const char* label, auto seconds_of) {
    std::printf("| %s |", label);
    for (const bench::PhaseTiming* p : phases) {
      const auto [cpu, wall] = seconds_of(*p);
      std::printf(" %.1f%% (%.3f) / %.1f%% |", 100.0 * cpu / p->thread_cpu_s, 1e3 * cpu / p->tokens,
                  100.0 * wall / p->wall_s);
    }
    std::printf("\n");
  };
  for (int c = 0; c < prof::kNumCategories; ++c) {
    const std::string label(prof::CategoryName(static_cast<prof::Category>(c)));
    row(label.c_str(), [c](const bench::PhaseTiming& p) {
      return std::pair<double, double>(p.profile[c].cpu_seconds, p.profile[c].seconds);
    });
  }
  row("unscoped (residual adds, glue, argmax)", [](const bench::PhaseTiming& p) {
    return std::pair<double, double>(p.thread_cpu_s - prof::TotalCpuSeconds(p.profile),
                                     p.wall_s - prof::TotalSeconds(p.profile));
  });
  if (decode) {
    // Effective read rate of the weight matrices while their kernels ran.
    PrintDecodeRates(phases, layer_matrix_bytes, head_bytes);
  }
  std::printf("| parallel kernel calls per token (matmul+attention+gated-delta+logits) |");
  for (const bench::PhaseTiming* p : phases) {
    const int64_t calls = p->profile[prof::kMatMul].calls + p->profile[prof::kAttention].calls +
                          p->profile[prof::kRecurrence].calls + p->profile[prof::kEmbedLogits].calls;
    std::printf(" %.1f |", static_cast<double>(calls) / p->tokens);
  }
  std::printf("\n");
}
void RunBench(const BenchArgs& args) {
  const double load_start = bench::LoadAverage1();
  ThreadPool pool(args.threads > 0 ? args.threads : ThreadPool::DefaultThreadCount());
  model::Model::LoadOptions load;
  if (!args.narrow_to.empty()) {
    load.narrow_to = ParseDType(args.narrow_to);
    if (!load.narrow_to) Fail("--narrow-to: unknown type '{}'", args.narrow_to);
  }
  std::unique_ptr<model::Model> m = model::Model::Load(args.model_path, load);
  bench::BenchOptions options;
  options.prompt_tokens = args.prompt_tokens;
  options.depths = args.depths;
  options.decode_tokens = args.decode_tokens;
  options.chunk_tokens = args.chunk_tokens;
  options.depth_fill = args.depth_fill == "copy" ? bench::DepthFill::kCopy : bench::DepthFill::kPrefill;
  options.fill_prompt_tokens = args.fill_prompt_tokens;
  options.profile = args.profile;
  options.k_q8 = args.k_q8;
  options.seed = args.seed;
  options.on_phase = PrintPhase;
  std::unique_ptr<bench::BandwidthProbe> paired_probe;
  if (args.paired_steps > 0 && !args.depths.empty()) {
    paired_probe = std::make_unique<bench::BandwidthProbe>(pool, static_cast<size_t>(args.paired_probe_gb * 1e9));
    options.probe = paired_probe.get();
    options.paired_steps = args.paired_steps;
  }
  const bench::BenchResult result = bench::RunModelBench(*m, options, pool);
  // Peak RSS before the 1 GB bandwidth probe, whose buffer would dominate it
  // (the smaller paired-probe buffer is live during the phases: printed with it).
  const size_t peak_rss = bench::PeakRssBytes();
  const int64_t nivcsw = bench::InvoluntaryContextSwitches();
  PrintPhase("bandwidth probe", 0);
  const double section_us = bench::MeasurePoolSectionMicros(pool, 2000);
  const bench::BandwidthResult bw =
      bench::MeasureReadBandwidth(pool, static_cast<size_t>(args.bandwidth_gb * 1e9), args.bandwidth_passes);
  const double load_end = bench::LoadAverage1();

  const bench::DecodeBytes db = bench::CountDecodeBytes(*m, args.k_q8);
  const size_t layer_matrix_bytes = db.layer_weights;  // small F32 vectors included (< 0.1%)
  std::printf("## cairn bench: %s\n\n", args.model_path.c_str());
  std::printf("- model: %s\n", m->config().Describe().c_str());
  std::printf("- decode bytes/token at depth 0: %.1f MB = layers %.1f + output head %.1f + embed row %.3f + "
              "recurrent state r/w %.1f; KV %.4f MB per cached token\n",
              db.Total(0) / kMB, db.layer_weights / kMB, db.output_head / kMB, db.embed_row / kMB,
              db.recurrent_rw / kMB, db.kv_per_token / kMB);
  std::printf("- threads: %d, kernels: %s, prefill chunk: %lld tokens, decode steps: %lld\n", pool.num_threads(),
              kernels::ActiveTargetName().c_str(), static_cast<long long>(args.chunk_tokens),
              static_cast<long long>(args.decode_tokens));
  std::printf("- read bandwidth (%.2f GB x %d passes, %d threads): best %.1f GB/s, median %.1f GB/s, "
              "cpu-normalized %.1f GB/s\n",
              bw.bytes / 1e9, bw.passes, pool.num_threads(), bw.best_gbps, bw.median_gbps, bw.cpu_gbps);
  std::printf("- empty pool section (fork-join): %.1f us median\n", section_us);
  std::printf("- peak RSS: %.1f MB (file weights %.1f MB%s); involuntary context switches: %lld\n",
              peak_rss / kMB, m->weights().bytes / kMB,
              paired_probe ? fmt::format(", paired probe buffer {:.1f} MB", paired_probe->bytes() / kMB).c_str()
                           : "",
              static_cast<long long>(nivcsw));
  std::printf("- load average (1 min): %.2f at start, %.2f at end\n", load_start, load_end);
  if (options.depth_fill == bench::DepthFill::kCopy) {
    std::printf("- depth fill: copy — each decode depth was prefilled for real only up to %lld tokens; the "
                "KV of the remaining positions replicates those blocks (recurrent state as after the "
                "prefill). Decode reads and computes the same at a given depth whatever the cached values, "
                "so the decode rows time a real step; the cached content is not a real prompt's.\n",
                static_cast<long long>(args.fill_prompt_tokens));
  }
  std::printf("- tok/s cpu = tokens / (process CPU s / threads): the rate with the cores to ourselves\n");

  if (!result.prefill.empty()) {
    std::printf("\n| prompt tokens | prefill tok/s (wall) | prefill tok/s (cpu) | load |\n"
                "| --- | --- | --- | --- |\n");
    for (const bench::PrefillResult& p : result.prefill) {
      std::printf("| %lld | %.1f | %.1f | %.1f |\n", static_cast<long long>(p.prompt_tokens),
                  p.timing.TokPerSecWall(), p.timing.TokPerSecCpu(), p.timing.load_avg);
    }
  }
  if (!result.decode.empty()) {
    std::printf("\nceiling = bandwidth / bytes per token; of ceiling: cpu tok/s vs cpu-normalized bandwidth, "
                "best step vs best bandwidth pass, and paired: median [min, max] over %lld steps of the step's "
                "read rate vs its neighbouring %.2f GB bandwidth passes (target >= 0.75)\n\n"
                "| depth | KV filled by | MB/token | decode tok/s (wall) | tok/s (cpu) | tok/s (best step) | "
                "ceiling tok/s (cpu bw) | of ceiling (cpu) | of ceiling (best) | of ceiling (paired) | load |\n"
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
                static_cast<long long>(args.paired_steps), args.paired_probe_gb);
    for (const bench::DecodeResult& d : result.decode) {
      const double mb = d.bytes_per_token / kMB;
      const double ceiling_cpu = bw.cpu_gbps * 1e3 / mb;
      const double ceiling_best = bw.best_gbps * 1e3 / mb;
      const std::string filled = d.prefilled >= d.depth
                                     ? std::string("prefill")
                                     : "prefill " + std::to_string(d.prefilled) + " + copy";
      std::string paired = "-";
      if (!d.paired_of_ceiling.empty()) {
        std::vector<double> r = d.paired_of_ceiling;
        std::sort(r.begin(), r.end());
        paired = fmt::format("{:.2f} [{:.2f}, {:.2f}]", r[r.size() / 2], r.front(), r.back());
      }
      std::printf("| %lld | %s | %.1f | %.2f | %.2f | %.2f | %.1f | %.2f | %.2f | %s | %.1f |\n",
                  static_cast<long long>(d.depth), filled.c_str(), mb, d.timing.TokPerSecWall(),
                  d.timing.TokPerSecCpu(), d.timing.TokPerSecBestStep(), ceiling_cpu,
                  d.timing.TokPerSecCpu() / ceiling_cpu, d.timing.TokPerSecBestStep() / ceiling_best,
                  paired.c_str(), d.timing.load_avg);
    }
  }
  if (args.profile) {
    std::vector<std::string> names;
    std::vector<const bench::PhaseTiming*> phases;
    for (const bench::PrefillResult& p : result.prefill) {
      names.push_back("prefill " + std::to_string(p.prompt_tokens));
      phases.push_back(&p.timing);
    }
    if (!phases.empty()) PrintProfile("Prefill profile", names, phases, false, layer_matrix_bytes, db.output_head);
    names.clear();
    phases.clear();
    for (const bench::DecodeResult& d : result.decode) {
      names.push_back("decode @" + std::to_string(d.depth));
      phases.push_back(&d.timing);
    }
    if (!phases.empty()) PrintProfile("Decode profile", names, phases, true, layer_matrix_bytes, db.output_head);
  }
}

const CommandRegistration kRegistration{"bench", 80, [](CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Measure prefill and decode speed of a model against this machine's memory bandwidth");
  cmd->add_option("--model", args->model_path, "GGUF model file")->required();
  cmd->add_option("--prompt-tokens", args->prompt_tokens, "Prefill lengths (fresh state, random tokens; 0 = none)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--depths", args->depths, "Decode depths (cached tokens before the timed decode steps)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--decode-tokens", args->decode_tokens, "Timed decode steps per depth")->capture_default_str();
  cmd->add_option("--chunk-tokens", args->chunk_tokens, "Prefill chunk size")->capture_default_str();
  cmd->add_option("--depth-fill", args->depth_fill,
                  "How decode depths are reached: 'prefill' (real prefill) or 'copy' (prefill "
                  "--fill-prompt-tokens, then replicate their KV blocks; timing only)")
      ->check(CLI::IsMember({"prefill", "copy"}))
      ->capture_default_str();
  cmd->add_option("--fill-prompt-tokens", args->fill_prompt_tokens,
                  "--depth-fill copy: tokens really prefilled before the KV is replicated")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads (0 = all cores)")->capture_default_str();
  cmd->add_option("--narrow-to", args->narrow_to,
                  "Re-encode matrices wider than this type at load, as --draft-quant does for a draft model");
  cmd->add_flag("--profile", args->profile, "Time split by category (matmul, attention, ...)");
  AddCacheTypeKOption(cmd, &args->k_q8);
  cmd->add_option("--bandwidth-gb", args->bandwidth_gb, "GB summed per bandwidth pass")->capture_default_str();
  cmd->add_option("--bandwidth-passes", args->bandwidth_passes, "Timed bandwidth passes")->capture_default_str();
  cmd->add_option("--paired-steps", args->paired_steps,
                  "Extra decode steps per depth, each between two bandwidth passes (0 = none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--paired-probe-gb", args->paired_probe_gb, "GB summed per paired bandwidth pass")
      ->check(CLI::Range(0.05, 8.0))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Random token seed")->capture_default_str();
  cmd->callback([args] { RunBench(*args); });
}};

}  // namespace
}  // namespace cairn::cli
