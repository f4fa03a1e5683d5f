// `cairn serve`: load a model and serve the OpenAI-compatible HTTP API.
#include <fmt/format.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "engine/default_model.h"
#include "engine/engine.h"
#include "server/http_server.h"

namespace cairn::cli {
namespace {

struct ServeArgs {
  engine::EngineOptions engine;
  server::ServerOptions server;
  int64_t max_body_mb = 32;
};

std::string HumanBytes(int64_t n) {
  double v = static_cast<double>(n);
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.2f} {}", v, units[u]);
}

// Ctrl-C / SIGTERM: the signals are blocked in every thread and taken by one
// waiting thread, so no engine or HTTP worker is interrupted mid-write. Before
// the server is up (model loading) a signal exits at once; afterwards it asks
// the main thread for a clean Stop().
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    // Before any other thread exists, so they all inherit the mask.
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    waiter_ = std::thread([this] {
      int signal = 0;
      sigwait(&set_, &signal);
      std::unique_lock lock(mutex_);
      if (!serving_) {
        std::fprintf(stderr, "\ncairn: interrupted\n");
        std::_Exit(130);
      }
      signalled_ = signal;
      changed_.notify_all();
    });
  }
  ~StopSignals() { waiter_.detach(); }  // still in sigwait when serving ended by error

  void SetServing() {
    std::lock_guard lock(mutex_);
    serving_ = true;
  }
  int Wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return signalled_ != 0; });
    return signalled_;
  }

 private:
  sigset_t set_;
  std::thread waiter_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool serving_ = false;
  int signalled_ = 0;
};

void PrintBanner(const engine::ServiceInfo& info, const engine::EngineOptions& engine_options,
                 const server::ServerOptions& options, int port, const std::string& default_note) {
  std::string url = fmt::format("http://{}:{}", options.host, port);
  if (!default_note.empty()) std::printf("%s\n", default_note.c_str());
  std::printf("model:    %s (%s, %s)\n", info.model_name.c_str(), info.architecture.c_str(),
              HumanBytes(info.model_bytes).c_str());
  std::printf("file:     %s\n", info.model_path.c_str());
  std::printf("context:  %lld tokens\n", static_cast<long long>(info.context_window));
  std::printf("cache:    %s\n", engine_options.prefix_cache
                                    ? fmt::format("prefix cache on (ram {} MiB{}, rung {} tokens, min reuse {})",
                                                  engine_options.cache_ram_mb,
                                                  engine_options.cache_ram_mb == 0 ? " = auto" : "",
                                                  engine_options.cache_rung_tokens,
                                                  engine_options.cache_min_reuse).c_str()
                                    : "prefix cache off");
  if (engine_options.prefix_cache) {
    const auto& pc = info.settings.value("prefix_cache", engine::Json::object());
    const engine::Json disk = pc.value("disk", engine::Json("off"));
    std::printf("disk:     %s\n", disk.is_string() ? disk.get<std::string>().c_str() : "off");
  }
  if (!info.settings.empty()) std::printf("settings: %s\n", info.settings.dump().c_str());
  std::printf("auth:     %s\n", options.api_key.empty() ? "none (loopback only is safest)" : "API key required");
  std::printf("\nlistening on %s  (OpenAI base URL: %s/v1)\n\n", url.c_str(), url.c_str());
  std::string auth = options.api_key.empty() ? "" : " -H 'Authorization: Bearer " + options.api_key + "'";
  std::printf("try:\n  curl %s/v1/chat/completions -H 'Content-Type: application/json'%s \\\n"
              "    -d '{\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}]}'\n\n",
              url.c_str(), auth.c_str());
  std::printf("Ctrl-C stops the server.\n");
  std::fflush(stdout);
}

void RunServe(ServeArgs& args) {
  StopSignals signals;
  std::string default_note;
  if (args.engine.model_path.empty()) {
    const engine::DefaultModel chosen = engine::ChooseDefaultModel();
    args.engine.model_path = chosen.path;
    default_note = chosen.note;
    if (args.engine.draft_model_path.empty()) {
      args.engine.draft_model_path = engine::DefaultDraftModelPath(args.engine.model_path);
    }
  }
  if (args.max_body_mb < 1) Fail("--max-body-mb must be at least 1");
  args.server.max_body_bytes = static_cast<size_t>(args.max_body_mb) << 20;
  args.engine.verbose = true;

  std::unique_ptr<engine::Engine> engine = engine::Engine::Create(args.engine);
  server::HttpServer http(*engine, args.server);
  http.Start();
  signals.SetServing();
  PrintBanner(engine->Info(), args.engine, args.server, http.port(), default_note);

  int signal = signals.Wait();
  std::fprintf(stderr, "\ncairn: %s received, stopping (finishing in-flight requests)...\n",
               signal == SIGINT ? "SIGINT" : "SIGTERM");
  http.Stop();
  std::fprintf(stderr, "cairn: stopped\n");
}

const CommandRegistration kRegistration{"serve", 10, [](CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve the OpenAI-compatible HTTP API on a local model");
  cmd->add_option("-m,--model", args->engine.model_path, "GGUF model (default: the embedded default model)");
  cmd->add_option("--host", args->server.host, "Address to bind (127.0.0.1 = this machine only)")
      ->capture_default_str();
  cmd->add_option("--port", args->server.port, "TCP port")->capture_default_str();
  cmd->add_option("--ctx", args->engine.context, "Context window in tokens (0 = model default, capped at 65536)");
  cmd->add_option("-t,--threads", args->engine.threads, "Compute threads (0 = all cores)");
  AddCacheTypeKOption(cmd, &args->engine.k_q8);
  cmd->add_option("--api-key", args->server.api_key,
                  "Require 'Authorization: Bearer KEY' or 'x-api-key: KEY' (except /health)");
  cmd->add_flag("--no-prompt-normalize", [args](int64_t) { args->server.prompt_normalize = false; },
                "Keep per-request volatile prompt text (Claude Code's billing header) instead of removing it");
  cmd->add_flag("--no-prefix-cache", [args](int64_t) { args->engine.prefix_cache = false; },
                "Disable the prefix cache");
  cmd->add_option("--cache-ram-mb", args->engine.cache_ram_mb, "Prefix-cache RAM budget in MiB (0 = auto)");
  cmd->add_option("--cache-rung-tokens", args->engine.cache_rung_tokens, "Tokens between cache checkpoints")
      ->capture_default_str();
  cmd->add_option("--cache-min-reuse", args->engine.cache_min_reuse, "Shortest prefix worth reusing (tokens)")
      ->capture_default_str();
  cmd->add_option("--cache-tail-tokens", args->engine.cache_tail_tokens,
                  "Hybrid models: last positions of each reply kept restorable, so the next turn resumes inside "
                  "the reply where its re-rendering diverges (0 = off)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--cache-checkpoint-fraction", args->engine.cache_checkpoint_fraction,
                  "Share of the cache RAM budget that recurrent checkpoints may hold")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  args->engine.disk_cache = true;
  args->engine.memory_guard = true;
  cmd->add_option("--cache-dir", args->engine.cache_dir,
                  "Disk tier of the prefix cache (default: $XDG_CACHE_HOME/cairn/kv or ~/.cache/cairn/kv)");
  cmd->add_option("--cache-disk-gb", args->engine.cache_disk_gb,
                  "Disk-tier budget in GiB, never exceeded (0 = min(20, half the free space))")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-disk-cache", [args](int64_t) { args->engine.disk_cache = false; },
                "Keep the prefix cache in RAM only (nothing survives a restart)");
  cmd->add_flag("--no-memory-guard", [args](int64_t) { args->engine.memory_guard = false; },
                "Do not shed the cache under memory pressure (MemAvailable, cgroup v2, PSI)");
  cmd->add_option("--spec", args->engine.spec_mode, "Speculative mode: lookup|draft|mtp|baseline|auto")
      ->check(CLI::IsMember({"lookup", "draft", "mtp", "baseline", "auto"}))
      ->capture_default_str();
  cmd->add_option("--draft-model", args->engine.draft_model_path, "Draft model for --spec draft");
  cmd->add_option("--draft-quant", args->engine.draft_quant,
                  "Draft matrices wider than this type are re-encoded to it at load (auto = q4_0; none = keep)")
      ->capture_default_str();
  cmd->add_option("--spec-max-cap", args->engine.spec_max_cap, "Most draft tokens per speculative round")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  cmd->add_option("--default-max-tokens", args->server.default_max_tokens,
                  "Answer limit in tokens for requests that set none (agent clients often send none)")
      ->check(CLI::Range(1, 1 << 30))
      ->capture_default_str();
  cmd->add_option("--max-body-mb", args->max_body_mb, "Largest request body in MiB (larger: 413)")
      ->capture_default_str();
  cmd->add_option("--keepalive", args->server.keepalive_seconds,
                  "Seconds between keep-alive chunks on idle streams")
      ->capture_default_str();
  cmd->callback([args] { RunServe(*args); });
}};

}  // namespace
}  // namespace cairn::cli
