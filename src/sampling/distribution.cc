#include "sampling/distribution.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace cairn::sampling {

Distribution Distribution::OneHot(int32_t vocab_size, int32_t token, bool greedy) {
  CAIRN_CHECK(token >= 0 && token < vocab_size);
  Distribution d;
  d.Reset(vocab_size, greedy);
  d.Append(token, 1.0f);
  d.Normalize();
  return d;
}

Distribution Distribution::FromWeights(std::span<const float> weights) {
  Distribution d;
  d.Reset(static_cast<int32_t>(weights.size()), false);
  for (size_t i = 0; i < weights.size(); ++i) {
    const float w = weights[i];
    if (!(w >= 0.0f) || !std::isfinite(w)) Fail("sampling: distribution weight {} of token {}", w, i);
    if (w > 0.0f) d.Append(static_cast<int32_t>(i), w);
  }
  d.Normalize();
  return d;
}

void Distribution::Reset(int32_t vocab_size, bool greedy) {
  vocab_size_ = vocab_size;
  greedy_ = greedy;
  ids_.clear();
  probs_.clear();
  total_ = 0.0;
}

void Distribution::Normalize() {
  const double sum = SumInLanes(probs_);
  if (!(sum > 0.0)) Fail("sampling: every token has probability zero (all banned or -inf logits?)");
  const double inv = 1.0 / sum;
  for (float& p : probs_) p = static_cast<float>(p * inv);
  total_ = SumInLanes(probs_);
}

float Distribution::Prob(int32_t token) const {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), token);
  if (it == ids_.end() || *it != token) return 0.0f;
  return probs_[it - ids_.begin()];
}

int32_t Distribution::Argmax() const {
  CAIRN_CHECK(!ids_.empty());
  size_t best = 0;
  for (size_t i = 1; i < probs_.size(); ++i) {
    if (probs_[i] > probs_[best]) best = i;  // strict: ascending ids keep the lowest on ties
  }
  return ids_[best];
}

int32_t Distribution::Sample(Rng& rng) const {
  if (greedy_) return Argmax();
  CAIRN_CHECK(!ids_.empty());
  return ids_[SampleIndex(probs_, total_, rng.Uniform())];
}

std::vector<float> Distribution::ToDense() const {
  std::vector<float> dense(vocab_size_, 0.0f);
  for (size_t i = 0; i < ids_.size(); ++i) dense[ids_[i]] = probs_[i];
  return dense;
}

double SumInLanes(std::span<const float> w) {
  constexpr size_t kLanes = 8;
  double lanes[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= w.size(); i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) lanes[l] += w[i + l];
  }
  double sum = 0.0;
  for (; i < w.size(); ++i) sum += w[i];
  for (double lane : lanes) sum += lane;
  return sum;
}

size_t SampleIndex(std::span<const float> w, double total, double u) {
  const double target = u * total;
  double cum = 0.0;
  size_t last_positive = 0;
  for (size_t j = 0; j < w.size(); ++j) {
    if (w[j] <= 0.0f) continue;
    cum += w[j];
    last_positive = j;
    if (target < cum) return j;
  }
  return last_positive;
}

}  // namespace cairn::sampling
