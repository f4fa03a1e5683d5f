// Speculative decoding benchmarks (docs/benchmarks.md, "Speculative decoding").
//
// (a) Code-edit workload: the first 300 lines of a Python stdlib file as the
//     prompt "return this file with one change"; lookup vs baseline greedy
//     decode tokens/s in the same process, interleaved (baseline, lookup,
//     baseline, lookup, ...) so machine load affects both alike; prints the
//     ratio of medians and whether the outputs were identical.
// (b) The trained default model (models/cairn-default.gguf, hybrid with an MTP
//     head) with `draft` (models/cairn-draft.gguf) and `mtp` on held-out
//     stdlib files (never trained on): per-position acceptance at a fixed
//     cap, mean committed per round and decode speed vs baseline, interleaved
//     in one process. CAIRN_SPEC_BENCH_DEFAULT=0 skips it.
// (c) Verify cost by width 1..16 relative to width 1 (MeasureVerifyCost) on
//     each model, at depth 32 and CAIRN_SPEC_BENCH_DEPTH (e.g. 16384).
//
// Models are written by the random-model writer at bench time (tiny presets
// by default; CAIRN_SPEC_BENCH_08B=1 adds qwen35 0.8b q8_0). Optionally
// CAIRN_SPEC_BENCH_HF=DIR adds a converted HF checkpoint (e.g. the trained
// default model) as a target. Environment: CAIRN_SPEC_BENCH_N (tokens per
// decode, default 64), CAIRN_SPEC_BENCH_REPS (default 3), CAIRN_THREADS.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_pool.h"
#include "model/convert/hf_convert.h"
#include "model/convert/random_model.h"
#include "model/model.h"
#include "sampling/sampler.h"
#include "spec/cap_controller.h"
#include "spec/draft_model_drafter.h"
#include "spec/lookup_drafter.h"
#include "spec/mtp_drafter.h"
#include "spec/speculative_decoder.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"

namespace cairn::spec {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

std::string CodeEditPrompt() {
  // Deterministic: the first readable stdlib file among these, first 300 lines.
  for (const char* path : {"/usr/lib/python3.11/textwrap.py", "/usr/lib/python3.11/shlex.py",
                           "/usr/lib/python3.11/difflib.py"}) {
    std::ifstream in(path);
    if (!in) continue;
    std::string line, body;
    for (int i = 0; i < 300 && std::getline(in, line); ++i) body += line + "\n";
    return "Return this file with one change: rename the first function's first parameter to `value`.\n\n```python\n" +
           body + "```\n\n```python\n";
  }
  std::string body;  // fallback: synthetic code
  for (int i = 0; i < 300; ++i) body += "def f" + std::to_string(i % 37) + "(x):\n    return x + " + std::to_string(i) + "\n";
  return "Return this file with one change.\n\n" + body;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

struct DecodeRun {
  double tokens_per_second = 0.0;
  std::vector<int32_t> ids;
  SpecStats stats;
};

DecodeRun RunOnce(const model::Model& m, const model::StateSnapshot& prefilled, const std::vector<int32_t>& prompt,
                  const std::vector<float>& last_logits, bool lookup, int n, ThreadPool& pool) {
  auto state = m.NewState();
  state->Restore(prefilled);
  sampling::SamplingParams params;
  params.temperature = 0.0f;
  sampling::Sampler sampler(params, m.n_vocab());
  sampling::TokenHistory history(prompt);
  DecodeOptions o;
  o.max_tokens = n;
  o.cap = 8;
  LookupDrafter drafter;
  DecodeOutput out = lookup ? DecodeSpeculative(m, *state, last_logits, {}, sampler, history, drafter, o, pool)
                            : DecodePlain(m, *state, last_logits, sampler, history, o, pool);
  DecodeRun r;
  r.tokens_per_second = out.stats.tokens_per_second();
  for (const auto& t : out.tokens) r.ids.push_back(t.token);
  r.stats = out.stats;
  return r;
}

void CodeEdit(const std::string& label, const std::string& path, ThreadPool& pool) {
  const auto m = model::Model::Load(path);
  const tokenizer::Tokenizer tok(tokenizer::LoadGgufVocabulary(path));
  const std::vector<int32_t> prompt = tok.Encode(CodeEditPrompt(), false, true);
  auto state = m->NewState();
  const PrefillOutput pre = Prefill(*m, *state, prompt, false, pool);
  const model::StateSnapshot snap = state->Snapshot();
  const int n = EnvInt("CAIRN_SPEC_BENCH_N", 64);
  const int reps = EnvInt("CAIRN_SPEC_BENCH_REPS", 3);
  std::vector<double> base, look;
  DecodeRun last_base, last_look;
  for (int r = 0; r < reps; ++r) {
    last_base = RunOnce(*m, snap, prompt, pre.last_logits, false, n, pool);
    last_look = RunOnce(*m, snap, prompt, pre.last_logits, true, n, pool);
    base.push_back(last_base.tokens_per_second);
    look.push_back(last_look.tokens_per_second);
  }
  std::printf("(a) code-edit %-22s prompt %5zu tok, %d new: baseline %7.1f tok/s, lookup %7.1f tok/s, ratio %.2fx, "
              "%.2f committed/round, accept %.0f%%, outputs %s\n",
              label.c_str(), prompt.size(), n, Median(base), Median(look), Median(look) / Median(base),
              last_look.stats.mean_committed_per_round(), 100.0 * last_look.stats.acceptance_rate(),
              last_base.ids == last_look.ids ? "identical" : "DIFFERENT");
  std::fflush(stdout);
}

void VerifyCurve(const std::string& label, const std::string& path, ThreadPool& pool) {
  const auto m = model::Model::Load(path);
  std::vector<int> depths = {32};
  if (const int deep = EnvInt("CAIRN_SPEC_BENCH_DEPTH", 0); deep > 32) depths.push_back(deep);
  for (int depth : depths) {
    const VerifyCostCurve c = MeasureVerifyCost(*m, pool, 16, depth, EnvInt("CAIRN_SPEC_BENCH_REPS", 3));
    std::printf("(c) verify cost %-20s depth %5d: width 1 = %.2f ms; relative:", label.c_str(), depth,
                1e3 * c.seconds[0]);
    for (int w = 1; w <= c.max_width(); ++w) std::printf(" %d:%.2f", w, c.At(w) / c.At(1));
    std::printf("\n    best cap at acceptance 0.5/0.7/0.9: %d/%d/%d\n", BestCap(c, 0.5, 0, 16),
                BestCap(c, 0.7, 0, 16), BestCap(c, 0.9, 0, 16));
    std::fflush(stdout);
  }
}

// --- (b) trained default model: draft and mtp on held-out text ----------------

// Held-out files of tools/train_default.py (sha1(relative path) % 20 == 0)
// that are ordinary code (the encodings tables are left out).
std::vector<std::string> HeldOutPrompts(const tokenizer::Tokenizer& tok, int prompt_tokens) {
  std::vector<std::string> prompts;
  for (const char* rel : {"base64.py", "copy.py", "difflib.py", "enum.py", "gzip.py", "imaplib.py", "sre_parse.py",
                          "xml/dom/pulldom.py"}) {
    std::ifstream in(std::string("/usr/lib/python3.11/") + rel);
    if (!in) continue;
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    // A window from a third of the way in, cut at a line start.
    size_t start = text.find('\n', text.size() / 3);
    start = start == std::string::npos ? 0 : start + 1;
    std::vector<int32_t> ids = tok.Encode(text.substr(start), false, false);
    if (static_cast<int>(ids.size()) < prompt_tokens) continue;
    ids.resize(static_cast<size_t>(prompt_tokens));
    prompts.push_back(tok.Decode(ids));
  }
  return prompts;
}

struct ModeTotals {
  std::vector<double> seconds;      // per prompt, summed over reps
  int64_t committed = 0, rounds = 0, drafted = 0, accepted = 0;
  std::vector<int64_t> histogram;   // accepted per round
  bool identical = true;
};

void DefaultModel(const std::string& models_dir, ThreadPool& pool) {
  const std::string target_path = models_dir + "/cairn-default.gguf";
  const std::string draft_path = models_dir + "/cairn-draft.gguf";
  if (!std::filesystem::exists(target_path) || !std::filesystem::exists(draft_path)) {
    std::printf("(b) skipped: %s or %s missing\n", target_path.c_str(), draft_path.c_str());
    return;
  }
  const auto target = model::Model::Load(target_path);
  const auto draft = model::Model::Load(draft_path);
  const tokenizer::Tokenizer tok(tokenizer::LoadGgufVocabulary(target_path));
  const int n = EnvInt("CAIRN_SPEC_BENCH_N", 64);
  const int reps = EnvInt("CAIRN_SPEC_BENCH_REPS", 3);
  const int prompt_tokens = EnvInt("CAIRN_SPEC_BENCH_PROMPT", 384);
  const std::vector<std::string> prompts = HeldOutPrompts(tok, prompt_tokens);
  struct Arm {
    std::string name;
    int cap;  // 0 = adaptive
  };
  const std::vector<Arm> arms = {{"baseline", 0}, {"draft", 2}, {"draft", 4}, {"draft", 0},
                                 {"mtp", 2},      {"mtp", 4},   {"mtp", 0}};
  const VerifyCostCurve curve = CalibratedVerifyCost(*target, target_path, pool, false, 17, 3);
  std::vector<ModeTotals> totals(arms.size());
  for (const std::string& text : prompts) {
    const std::vector<int32_t> prompt = tok.Encode(text, false, false);
    auto prefill_state = target->NewState();
    const PrefillOutput pre = Prefill(*target, *prefill_state, prompt, /*want_hidden=*/true, pool);
    const model::StateSnapshot snap = prefill_state->Snapshot();
    std::vector<int32_t> reference;
    for (int r = 0; r < reps; ++r) {
      for (size_t a = 0; a < arms.size(); ++a) {
        auto state = target->NewState();
        state->Restore(snap);
        sampling::SamplingParams params;
        params.temperature = 0.0f;
        sampling::Sampler sampler(params, target->n_vocab());
        sampling::TokenHistory history(prompt);
        DecodeOptions o;
        o.max_tokens = n;
        o.cap = arms[a].cap;
        CapControllerOptions co;
        co.max_cap = 16;
        CapController controller(curve, co);
        if (arms[a].cap == 0 && arms[a].name != "baseline") o.controller = &controller;
        DecodeOutput out;
        if (arms[a].name == "baseline") {
          out = DecodePlain(*target, *state, pre.last_logits, sampler, history, o, pool);
        } else if (arms[a].name == "draft") {
          DraftModelDrafter drafter(*draft, target->n_vocab(), pool);
          out = DecodeSpeculative(*target, *state, pre.last_logits, {}, sampler, history, drafter, o, pool);
        } else {
          MtpDrafter drafter(*target, pool);
          out = DecodeSpeculative(*target, *state, pre.last_logits, pre.hidden, sampler, history, drafter, o, pool);
        }
        std::vector<int32_t> ids;
        for (const auto& t : out.tokens) ids.push_back(t.token);
        if (a == 0 && r == 0) reference = ids;
        ModeTotals& m = totals[a];
        if (ids != reference) m.identical = false;
        if (m.seconds.size() < prompts.size()) m.seconds.resize(prompts.size(), 0.0);
        m.seconds[&text - prompts.data()] += out.stats.seconds;
        m.committed += out.stats.committed;
        m.rounds += out.stats.rounds;
        m.drafted += out.stats.drafted;
        m.accepted += out.stats.accepted;
        if (m.histogram.size() < out.stats.accept_histogram.size()) m.histogram.resize(out.stats.accept_histogram.size());
        for (size_t j = 0; j < out.stats.accept_histogram.size(); ++j) m.histogram[j] += out.stats.accept_histogram[j];
      }
    }
  }
  double base_seconds = 0;
  for (double s : totals[0].seconds) base_seconds += s;
  std::printf("(b) default model, %zu held-out prompts x %d tokens, %d new tokens, %d reps (interleaved)\n",
              prompts.size(), prompt_tokens, n, reps);
  std::printf("    %-9s %4s %9s %8s %10s %8s  accepted at draft position 1..4 (fixed caps)  outputs\n", "mode", "cap",
              "tok/s", "speedup", "commit/rnd", "accept");
  for (size_t a = 0; a < arms.size(); ++a) {
    const ModeTotals& m = totals[a];
    double seconds = 0;
    for (double s : m.seconds) seconds += s;
    const double tps = seconds > 0 ? static_cast<double>(m.committed) / seconds : 0;
    const double committed_per_round =
        m.rounds > 0 ? static_cast<double>(m.committed - static_cast<int64_t>(prompts.size()) * reps) / m.rounds : 0;
    std::printf("    %-9s %4s %9.1f %7.2fx %10.2f %7.0f%%  ", arms[a].name.c_str(),
                arms[a].name == "baseline" ? "-" : (arms[a].cap == 0 ? "auto" : std::to_string(arms[a].cap).c_str()),
                tps, seconds > 0 ? base_seconds / seconds : 0, committed_per_round,
                m.drafted > 0 ? 100.0 * m.accepted / m.drafted : 0.0);
    if (arms[a].cap > 0) {
      // P(draft i accepted | the round drafted i): rounds with >= i accepted / rounds.
      for (int i = 1; i <= 4; ++i) {
        int64_t reached = 0;
        for (size_t j = static_cast<size_t>(i); j < m.histogram.size(); ++j) reached += m.histogram[j];
        if (i <= arms[a].cap) std::printf("%5.0f%%", m.rounds > 0 ? 100.0 * reached / m.rounds : 0.0);
        else std::printf("%6s", "-");
      }
    } else {
      std::printf("%24s", "");
    }
    std::printf("  %s\n", m.identical ? "identical" : "DIFFERENT");
  }
  std::fflush(stdout);
}

std::string MakeModel(const std::string& arch, const std::string& preset, DType type, const std::string& dir) {
  const std::string path = dir + "/" + arch + "-" + preset + ".gguf";
  if (std::filesystem::exists(path)) return path;
  model::RandomModelOptions o;
  o.arch = arch;
  o.preset = preset;
  o.matrix_type = type;
  o.seed = 1;
  const char* shared = std::getenv("CAIRN_SHARED_DIR");
  o.tokenizer_dir = std::string(shared ? shared : CAIRN_SHARED_DIR) + "/testdata/qwen3-tokenizer";
  model::WriteRandomModel(o, path);
  return path;
}

int Main() {
  const int threads = EnvInt("CAIRN_THREADS", static_cast<int>(std::thread::hardware_concurrency()));
  ThreadPool pool(threads);
  const std::string dir = (std::filesystem::temp_directory_path() / "cairn-spec-bench").string();
  std::filesystem::create_directories(dir);
  std::printf("spec_bench: %d threads\n", threads);
  std::vector<std::pair<std::string, std::string>> models = {
      {"qwen3 tiny f32", MakeModel("qwen3", "tiny", DType::kF32, dir)},
      {"qwen35 tiny f32", MakeModel("qwen35", "tiny", DType::kF32, dir)},
  };
  {
    // The trained default model: a code model, so (a) measures real copying.
    const char* models_dir = std::getenv("CAIRN_MODELS_DIR");
    const std::string path = std::string(models_dir ? models_dir : CAIRN_SOURCE_DIR "/models") + "/cairn-default.gguf";
    if (std::filesystem::exists(path)) models.emplace_back("cairn-default q8_0", path);
  }
  if (EnvInt("CAIRN_SPEC_BENCH_08B", 0) != 0) {
    models.emplace_back("qwen35 0.8b q8_0", MakeModel("qwen35", "0.8b", DType::kQ8_0, dir));
  }
  if (const char* hf = std::getenv("CAIRN_SPEC_BENCH_HF"); hf != nullptr && *hf != '\0') {
    const std::string path = dir + "/hf-model.gguf";
    model::ConvertOptions co;
    co.matrix_type = DType::kF32;
    model::ConvertHfToGguf(hf, path, co);
    models.emplace_back(std::filesystem::path(hf).filename().string(), path);
  }
  if (EnvInt("CAIRN_SPEC_BENCH_DEFAULT", 1) != 0) {
    const char* models_dir = std::getenv("CAIRN_MODELS_DIR");
    DefaultModel(models_dir ? models_dir : CAIRN_SOURCE_DIR "/models", pool);
  }
  if (EnvInt("CAIRN_SPEC_BENCH_ONLY_DEFAULT", 0) != 0) return 0;
  // CAIRN_SPEC_BENCH_MODELS=substring keeps only the models whose label contains it.
  if (const char* only = std::getenv("CAIRN_SPEC_BENCH_MODELS"); only != nullptr && *only != '\0') {
    std::erase_if(models, [&](const auto& m) { return m.first.find(only) == std::string::npos; });
  }
  for (const auto& [label, path] : models) CodeEdit(label, path, pool);
  for (const auto& [label, path] : models) VerifyCurve(label, path, pool);
  return 0;
}

}  // namespace
}  // namespace cairn::spec

int main() { return cairn::spec::Main(); }
