// Speculative decoding benchmarks (docs/benchmarks.md, "Speculative decoding").
//
// (a) Code-edit workload: the first 300 lines of a Python stdlib file as the
//     prompt "return this file with one change"; lookup vs baseline greedy
//     decode tokens/s in the same process, interleaved (baseline, lookup,
//     baseline, lookup, ...) so machine load affects both alike; prints the
//     ratio of medians and whether the outputs were identical.
// (c) Verify cost by width 1..16 relative to width 1 (MeasureVerifyCost) on
//     each model.
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
#include "spec/lookup_drafter.h"
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
  const VerifyCostCurve c = MeasureVerifyCost(*m, pool, 16, 32, EnvInt("CAIRN_SPEC_BENCH_REPS", 3));
  std::printf("(c) verify cost %-20s width 1 = %.2f ms; relative:", label.c_str(), 1e3 * c.seconds[0]);
  for (int w = 1; w <= c.max_width(); ++w) std::printf(" %d:%.2f", w, c.At(w) / c.At(1));
  std::printf("\n    best cap at acceptance 0.5/0.7/0.9: %d/%d/%d\n", BestCap(c, 0.5, 0, 16), BestCap(c, 0.7, 0, 16),
              BestCap(c, 0.9, 0, 16));
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
  for (const auto& [label, path] : models) CodeEdit(label, path, pool);
  for (const auto& [label, path] : models) VerifyCurve(label, path, pool);
  return 0;
}

}  // namespace
}  // namespace cairn::spec

int main() { return cairn::spec::Main(); }
