// Per-request sampling parameters (OpenAI / llama.cpp request fields) and
// their validation. Semantics and the reasons for them: docs/sampling.md.
//
// Defaults are neutral (sample the model's distribution unchanged at
// temperature 1); server-wide defaults are the engine's business.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace cairn::sampling {

// OpenAI allows at most 20 top_logprobs.
inline constexpr int32_t kMaxTopLogprobs = 20;

struct SamplingParams {
  // 0 = greedy (argmax, lowest id on ties, no randomness). Must be finite, >= 0.
  float temperature = 1.0f;
  // Keep the k most likely tokens; 0 = off. Must be >= 0.
  int32_t top_k = 0;
  // Keep the smallest most-likely prefix with mass >= top_p; in (0, 1], 1 = off.
  float top_p = 1.0f;
  // Drop tokens with p < min_p * p_max; in [0, 1], 0 = off.
  float min_p = 0.0f;
  // Seeds the request's Rng (sampling/rng.h). Absent: a random seed.
  std::optional<uint64_t> seed;

  // OpenAI: logit -= frequency_penalty * count + presence_penalty * (count > 0),
  // counted over generated tokens only. Each in [-2, 2].
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  // llama.cpp / HF: for each distinct token among the last repeat_last_n
  // tokens of prompt + generated text, logit /= r if logit > 0 else logit *= r.
  // Must be finite and > 0; 1 = off.
  float repetition_penalty = 1.0f;
  // Window of repetition_penalty: -1 = whole context, 0 = off, else >= 1.
  int32_t repeat_last_n = 64;

  // Token id -> additive logit bias in [-100, 100] (OpenAI); exactly -100 bans.
  std::map<int32_t, float> logit_bias;
  // Ban the model's end-of-generation tokens (logit = -inf).
  bool ignore_eos = false;
  // Upper bound on generated tokens (enforced by the engine); absent = context.
  std::optional<int32_t> max_tokens;

  // Report the chosen token's log-probability, and the top_logprobs most likely
  // alternatives (0..20, needs logprobs). See docs/sampling.md for the exact
  // distribution reported.
  bool logprobs = false;
  int32_t top_logprobs = 0;

  bool greedy() const { return temperature == 0.0f; }

  // Throws cairn::Error naming the first offending field.
  void Validate(int32_t vocab_size) const;
};

}  // namespace cairn::sampling
