#include "spec/model_draft_picker.h"

#include <limits>

namespace cairn::spec {
namespace {

sampling::SamplingParams DraftParams(const sampling::SamplingParams& request) {
  sampling::SamplingParams p;
  p.temperature = request.temperature;
  p.top_k = request.top_k;
  p.top_p = request.top_p;
  p.min_p = request.min_p;
  p.seed = 0;  // the Sampler's own Rng is unused: drafts draw from rng_
  return p;
}

}  // namespace

ModelDraftPicker::ModelDraftPicker(const DraftSampling& sampling, int32_t vocab_size)
    : greedy_(sampling.params.greedy()), rng_(sampling.seed, /*stream=*/1) {
  if (!greedy_) sampler_ = std::make_unique<sampling::Sampler>(DraftParams(sampling.params), vocab_size);
}

sampling::DraftToken ModelDraftPicker::Pick(std::span<const float> logits) {
  if (greedy_) {
    // Argmax, lowest id on ties (the same rule as the greedy Sampler).
    size_t best = 0;
    float second = -std::numeric_limits<float>::infinity();
    for (size_t i = 1; i < logits.size(); ++i) {
      if (logits[i] > logits[best]) {
        second = logits[best];
        best = i;
      } else if (logits[i] > second) {
        second = logits[i];
      }
    }
    last_margin_ = logits[best] - second;
    return sampling::DraftToken{static_cast<int32_t>(best), nullptr};
  }
  if (used_ == q_.size()) q_.emplace_back();
  sampling::Distribution& q = q_[used_++];
  sampler_->ComputeDistribution(logits, empty_history_, &q);
  return sampling::DraftToken{q.Sample(rng_), &q};
}

}  // namespace cairn::spec
