// History- and request-dependent logit adjustments, applied in place to one
// row of vocab logits before temperature and truncation, in this order:
//   1. repetition_penalty over the distinct tokens of the last repeat_last_n
//      tokens of prompt + generated (llama.cpp `repeat_last_n`, HF rule:
//      positive logits are divided by r, others multiplied by r);
//   2. OpenAI presence / frequency penalties over generated tokens:
//      logit -= count * frequency_penalty + (count > 0) * presence_penalty;
//   3. logit_bias: logit += bias, and bias == -100 bans (logit = -inf);
//   4. ignore_eos: every end-of-generation token is banned.
// Reasons for the order are in docs/sampling.md.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/sampling_params.h"
#include "sampling/token_history.h"

namespace cairn::sampling {

class PenaltyApplier {
 public:
  // params must already be validated for vocab_size.
  PenaltyApplier(const SamplingParams& params, int32_t vocab_size, std::vector<int32_t> eos_tokens);

  // True when Apply can change logits at all (lets callers skip it).
  bool active() const { return active_; }

  // logits: [vocab_size]. Throws cairn::Error if a history token is outside
  // the vocabulary.
  void Apply(const TokenHistory& history, std::span<float> logits);

 private:
  SamplingParams params_;  // a copy: the applier must not dangle when its owner moves
  int32_t vocab_size_;
  std::vector<int32_t> eos_tokens_;
  bool active_;
  // Repetition window dedupe: stamp_[token] == epoch_ once penalised this call.
  std::vector<uint32_t> stamp_;
  uint32_t epoch_ = 0;
};

}  // namespace cairn::sampling
