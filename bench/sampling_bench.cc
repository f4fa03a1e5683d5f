// Sampling cost per token over a Qwen-sized vocabulary (151,936 logits):
// greedy, the common top-k/top-p/temperature chain, top-p over the whole
// vocabulary, and with penalties + logprobs. Time per iteration = ns per token.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sampling/rng.h"
#include "sampling/sampler.h"

namespace cairn::sampling {
namespace {

constexpr int32_t kVocab = 151936;

// LM-like logits: most mass on a few hundred tokens, a long flat tail.
std::vector<float> MakeLogits() {
  Rng rng(42);
  std::vector<float> logits(kVocab);
  for (float& l : logits) l = static_cast<float>(rng.Uniform() * 8.0 - 10.0);
  for (int i = 0; i < 300; ++i) logits[rng.NextU64() % kVocab] = static_cast<float>(rng.Uniform() * 10.0);
  return logits;
}

void Run(benchmark::State& state, const SamplingParams& params) {
  const std::vector<float> logits = MakeLogits();
  Sampler sampler(params, kVocab);
  std::vector<int32_t> prompt(2000);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i * 7919) % kVocab);
  TokenHistory history(prompt);
  for (int i = 0; i < 200; ++i) history.Append(i * 31);
  // One iteration samples one token, so the Time column is ns per token.
  for (auto _ : state) benchmark::DoNotOptimize(sampler.Sample(logits, history).token);
  state.SetItemsProcessed(state.iterations());
}

void BM_Greedy(benchmark::State& state) {
  SamplingParams params;
  params.temperature = 0.0f;
  Run(state, params);
}

void BM_TopK40TopP95(benchmark::State& state) {
  SamplingParams params;
  params.temperature = 0.7f;
  params.top_k = 40;
  params.top_p = 0.95f;
  params.seed = 1;
  Run(state, params);
}

void BM_TopP95FullVocab(benchmark::State& state) {
  SamplingParams params;
  params.temperature = 0.8f;
  params.top_p = 0.95f;
  params.seed = 1;
  Run(state, params);
}

void BM_PlainTemperature(benchmark::State& state) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.seed = 1;
  Run(state, params);
}

void BM_PenaltiesAndLogprobs(benchmark::State& state) {
  SamplingParams params;
  params.temperature = 0.7f;
  params.top_k = 40;
  params.top_p = 0.95f;
  params.repetition_penalty = 1.1f;
  params.presence_penalty = 0.5f;
  params.frequency_penalty = 0.2f;
  params.logprobs = true;
  params.top_logprobs = 5;
  params.seed = 1;
  Run(state, params);
}

BENCHMARK(BM_Greedy);
BENCHMARK(BM_TopK40TopP95);
BENCHMARK(BM_TopP95FullVocab);
BENCHMARK(BM_PlainTemperature);
BENCHMARK(BM_PenaltiesAndLogprobs);

}  // namespace
}  // namespace cairn::sampling

BENCHMARK_MAIN();
