// The per-request sampler: raw logits row [vocab] + token history -> the
// processed distribution p(.), a chosen token, and OpenAI-style logprobs.
//
// Pipeline for one row (docs/sampling.md has the reasons):
//   1. copy the row; NaN -> -inf, +inf -> FLT_MAX;
//   2. penalties and logit_bias (sampling/penalties.h) -> "processed logits" l;
//   3. temperature 0: p = one-hot on argmax l (lowest id on ties), no RNG;
//   4. otherwise weights w = exp((l - max l) / T), then, in HF order,
//      top_k (k best by l), top_p (shortest most-likely prefix whose mass is
//      >= top_p of the top_k-renormalised distribution), min_p (w >= min_p *
//      w_max; a prefix of the same order), renormalised to sum 1.
//      Tokens whose weight underflows to 0 (l - max < -87 T) are never sampled.
// logprobs are log-softmax of the processed logits l (after penalties and
// bias, before temperature and truncation).
//
// RNG consumption: Sample() draws exactly one Uniform() when temperature > 0
// and none when temperature == 0. Nothing else in this class draws.
//
// Not thread-safe; one Sampler per request. Scratch is reused across calls so
// steady-state decoding does not allocate.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/distribution.h"
#include "sampling/penalties.h"
#include "sampling/rng.h"
#include "sampling/sampling_params.h"
#include "sampling/token_history.h"
#include "sampling/top_tokens.h"

namespace cairn::sampling {

struct TokenLogprob {
  int32_t token = -1;
  float logprob = 0.0f;  // natural log
};

struct SampledToken {
  int32_t token = -1;
  // Only filled when params.logprobs; logprob is 0 otherwise.
  float logprob = 0.0f;
  std::vector<TokenLogprob> top_logprobs;  // params.top_logprobs entries, best first
};

class Sampler {
 public:
  // Validates params (throws cairn::Error naming the field). eos_tokens are
  // banned when params.ignore_eos. The Rng is seeded with params.seed, or with
  // a fresh std::random_device seed (see seed()).
  Sampler(const SamplingParams& params, int32_t vocab_size, std::vector<int32_t> eos_tokens = {});

  const SamplingParams& params() const { return params_; }
  int32_t vocab_size() const { return vocab_size_; }
  uint64_t seed() const { return seed_; }  // the seed actually used
  Rng& rng() { return rng_; }

  // One ordinary decoding step (history is not modified; the caller appends
  // the returned token).
  SampledToken Sample(std::span<const float> logits, const TokenHistory& history);

  // p(.) for one row given the history before that row. Overwrites *out,
  // reusing its storage. Also remembers the row's processed logits for
  // Annotate(). Draws no randomness.
  void ComputeDistribution(std::span<const float> logits, const TokenHistory& history,
                           Distribution* out);

  // {token, logprob, top_logprobs} for the row last passed to
  // ComputeDistribution (logprob fields only when params.logprobs).
  SampledToken Annotate(int32_t token);

 private:
  // Steps 4.. for temperature > 0, from processed_ to *out.
  void Truncate(Distribution* out);
  // Support of the full-vocab path when top_p < 1 (weights_ already filled).
  void NucleusOfAll(float min_weight, double target_mass, Distribution* out);

  SamplingParams params_;
  int32_t vocab_size_;
  uint64_t seed_;
  Rng rng_;
  PenaltyApplier penalties_;

  std::vector<float> processed_;        // [vocab] processed logits of the last row
  std::vector<float> weights_;          // [vocab] exp((l - max) / T), full-vocab path
  std::vector<Candidate> candidates_;   // truncation scratch
  std::vector<float> selected_w_;       // weights aligned with candidates_
  std::vector<Candidate> top_scratch_;  // top_logprobs scratch
  double log_norm_ = 0.0;               // log-sum-exp of processed_, valid if log_norm_valid_
  bool log_norm_valid_ = false;
  Distribution dist_;                   // Sample()'s distribution
};

}  // namespace cairn::sampling
