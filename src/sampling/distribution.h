// An explicit probability distribution over a vocabulary: the final sampling
// distribution p(.) (after penalties, bias, temperature, truncation and
// renormalisation) that speculative verification compares with a draft q(.).
//
// Storage is sparse: the support (tokens with p > 0) as ascending ids with
// their probabilities. Ascending ids make Prob() a binary search and let two
// distributions be merged in one pass (residual max(0, p - q)). A full-vocab
// support is just n entries (same bytes as a dense vector, plus ids).
//
// A "greedy" distribution (temperature 0) is one-hot on the argmax and marks
// that sampling from it must consume no randomness.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/rng.h"

namespace cairn::sampling {

class Distribution {
 public:
  Distribution() = default;

  // One-hot on `token` (a deterministic draft, or a greedy target row).
  static Distribution OneHot(int32_t vocab_size, int32_t token, bool greedy = false);
  // Normalises dense non-negative weights [vocab]; throws cairn::Error if they
  // are all zero or any is negative / not finite.
  static Distribution FromWeights(std::span<const float> weights);

  // Builder: Reset, then Append ids in strictly ascending order with weights
  // > 0, then Normalize (divides by the sum; throws cairn::Error if empty).
  // Reuses capacity, so a long-lived Distribution does not allocate per token.
  void Reset(int32_t vocab_size, bool greedy);
  void Append(int32_t id, float weight) {
    ids_.push_back(id);
    probs_.push_back(weight);
  }
  void Normalize();

  int32_t vocab_size() const { return vocab_size_; }
  bool greedy() const { return greedy_; }
  size_t support_size() const { return ids_.size(); }
  std::span<const int32_t> ids() const { return ids_; }      // ascending
  std::span<const float> probs() const { return probs_; }    // > 0, sum ~ 1

  // p(token); 0 outside the support. O(log support).
  float Prob(int32_t token) const;
  // Most likely token, lowest id on ties.
  int32_t Argmax() const;
  // Inverse-CDF sample in ascending-id order from one Uniform() draw;
  // a greedy distribution returns Argmax() and draws nothing.
  int32_t Sample(Rng& rng) const;
  // Dense copy [vocab_size] (tests, debugging).
  std::vector<float> ToDense() const;

 private:
  int32_t vocab_size_ = 0;
  bool greedy_ = false;
  std::vector<int32_t> ids_;
  std::vector<float> probs_;
  double total_ = 0.0;  // sum of probs_ in storage order (1 up to rounding)
};

// Sum in double over 8 independent lanes in a fixed order: deterministic, and
// vectorised (one running sum would be bound by add latency).
double SumInLanes(std::span<const float> w);

// Draws from the distribution whose weights are w[j] (non-negative), by
// inverse CDF over j with u * total as target; `total` must be the sum of w
// in index order computed in double. Returns the last index with w > 0 if
// rounding runs past the end. Shared by Distribution and residual sampling.
size_t SampleIndex(std::span<const float> w, double total, double u);

}  // namespace cairn::sampling
