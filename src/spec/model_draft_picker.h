// Turns a drafter model's logits row into a draft token (shared by the
// draft-model and MTP drafters).
//
// Greedy (params.temperature == 0): argmax, lowest id on ties, q = one-hot
// (DraftToken.q = nullptr). Otherwise the token is sampled from the drafter's
// processed distribution q (same temperature / top-k / top-p / min-p as the
// request, no penalties: q may be any distribution for exactness, and a
// penalty-free q needs no draft-side history) from Rng(seed, 1), a stream
// separate from the target's, and q is kept for the accept test.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <span>

#include "sampling/distribution.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"
#include "sampling/speculative.h"
#include "sampling/token_history.h"
#include "spec/drafter.h"

namespace cairn::spec {

class ModelDraftPicker {
 public:
  ModelDraftPicker(const DraftSampling& sampling, int32_t vocab_size);

  // Clears the q distributions of the previous proposal.
  void NewProposal() { used_ = 0; }
  sampling::DraftToken Pick(std::span<const float> logits);
  // Greedy: the last Pick's top-1 minus top-2 logit (the drafter's
  // confidence); +inf when sampling.
  float last_margin() const { return last_margin_; }

 private:
  bool greedy_;
  std::unique_ptr<sampling::Sampler> sampler_;  // only when !greedy_
  sampling::Rng rng_;
  sampling::TokenHistory empty_history_;
  std::deque<sampling::Distribution> q_;  // stable addresses; reused across proposals
  size_t used_ = 0;
  float last_margin_ = std::numeric_limits<float>::infinity();
};

}  // namespace cairn::spec
