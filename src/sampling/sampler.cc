#include "sampling/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "core/error.h"
#include "sampling/fast_exp.h"

namespace cairn::sampling {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kMaxFloat = std::numeric_limits<float>::max();

uint64_t ChooseSeed(const SamplingParams& params) {
  if (params.seed) return *params.seed;
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

// kept[0, count) hold {weight, id}: append them to *out in
// ascending id order and normalise.
void BuildSupport(std::vector<Candidate>& kept, size_t count, int32_t vocab_size, Distribution* out) {
  std::sort(kept.begin(), kept.begin() + count,
            [](const Candidate& a, const Candidate& b) { return a.id < b.id; });
  out->Reset(vocab_size, /*greedy=*/false);
  for (size_t j = 0; j < count; ++j) out->Append(kept[j].id, kept[j].logit);
  out->Normalize();
}

// NaN -> -inf, +inf -> FLT_MAX, on the bits (integer selects vectorise; float
// ones do not under -ftrapping-math).
float SanitizeLogit(float x) {
  constexpr uint32_t kInfBits = 0x7f800000u;
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t magnitude = bits & 0x7fffffffu;
  uint32_t out = magnitude > kInfBits ? std::bit_cast<uint32_t>(kNegInf) : bits;
  out = out == kInfBits ? std::bit_cast<uint32_t>(kMaxFloat) : out;
  return std::bit_cast<float>(out);
}

[[noreturn]] void FailNoToken() {
  Fail("sampling: no token can be sampled (every logit is -inf/NaN after penalties and logit_bias)");
}

}  // namespace

Sampler::Sampler(const SamplingParams& params, int32_t vocab_size, std::vector<int32_t> eos_tokens)
    : params_((params.Validate(vocab_size), params)),
      vocab_size_(vocab_size),
      seed_(ChooseSeed(params)),
      rng_(seed_),
      penalties_(params_, vocab_size, std::move(eos_tokens)) {}

SampledToken Sampler::Sample(std::span<const float> logits, const TokenHistory& history) {
  ComputeDistribution(logits, history, &dist_);
  return Annotate(dist_.Sample(rng_));
}

void Sampler::ComputeDistribution(std::span<const float> logits, const TokenHistory& history,
                                  Distribution* out) {
  if (static_cast<int64_t>(logits.size()) != vocab_size_) {
    Fail("sampling: logits row has {} entries, vocabulary has {}", logits.size(), vocab_size_);
  }
  processed_.resize(vocab_size_);
  for (int32_t i = 0; i < vocab_size_; ++i) processed_[i] = SanitizeLogit(logits[i]);
  penalties_.Apply(history, processed_);
  log_norm_valid_ = false;

  if (params_.greedy()) {
    const int32_t best = ArgmaxLogit(processed_);
    if (best < 0) FailNoToken();
    out->Reset(vocab_size_, /*greedy=*/true);
    out->Append(best, 1.0f);
    out->Normalize();
    return;
  }
  Truncate(out);
}

void Sampler::Truncate(Distribution* out) {
  const float t = params_.temperature;
  const float min_weight = params_.min_p;  // w_max == FastExp(0) == 1 exactly
  const bool use_top_p = params_.top_p < 1.0f;

  if (params_.top_k > 0 && params_.top_k < vocab_size_) {
    // Only k exps: select the k best logits, then work on that sorted list.
    SelectTopTokens(processed_, static_cast<size_t>(params_.top_k), &candidates_);
    if (candidates_.empty()) FailNoToken();
    const float max_logit = candidates_[0].logit;
    selected_w_.resize(candidates_.size());
    double total = 0.0;
    for (size_t j = 0; j < candidates_.size(); ++j) {
      selected_w_[j] = FastExp((candidates_[j].logit - max_logit) / t);
      total += selected_w_[j];
    }
    // Every filter keeps a prefix of the Better order; take the shortest.
    const double target = use_top_p ? static_cast<double>(params_.top_p) * total : 0.0;
    double cum = 0.0;
    size_t keep = 0;
    for (; keep < candidates_.size(); ++keep) {
      const float w = selected_w_[keep];
      if (w <= 0.0f || w < min_weight) break;
      candidates_[keep].logit = w;  // reuse the slot for the weight
      cum += w;
      if (use_top_p && cum >= target) {
        ++keep;
        break;
      }
    }
    BuildSupport(candidates_, keep, vocab_size_, out);
    return;
  }

  // Full vocabulary: one vectorised exp pass.
  const int32_t best = ArgmaxLogit(processed_);
  if (best < 0) FailNoToken();
  const float max_logit = processed_[best];
  weights_.resize(vocab_size_);
  for (int32_t i = 0; i < vocab_size_; ++i) weights_[i] = FastExp((processed_[i] - max_logit) / t);

  if (use_top_p) {
    NucleusOfAll(min_weight, static_cast<double>(params_.top_p) * SumInLanes(weights_), out);
    return;
  }
  out->Reset(vocab_size_, /*greedy=*/false);
  for (int32_t i = 0; i < vocab_size_; ++i) {
    const float w = weights_[i];
    if (w > 0.0f && w >= min_weight) out->Append(i, w);
  }
  out->Normalize();
}

void Sampler::NucleusOfAll(float min_weight, double target_mass, Distribution* out) {
  // min_p keeps a prefix of the same order as top_p, so dropping its tokens up
  // front changes neither the nucleus's prefix sums nor the result.
  // The nucleus is a prefix of the descending order, so if the tokens with
  // w >= cutoff already hold the target mass, the nucleus lies inside them and
  // the others need not be sorted. Try a high cutoff first (few candidates),
  // then lower ones; cutoff 0 always works.
  for (const float cutoff : {1e-3f, 1e-6f, 0.0f}) {
    const float floor = std::max(cutoff, min_weight);
    candidates_.clear();
    double mass = 0.0;
    for (int32_t i = 0; i < vocab_size_; ++i) {
      const float w = weights_[i];
      if (w > 0.0f && w >= floor) {
        candidates_.push_back({processed_[i], i});
        mass += w;
      }
    }
    if (mass >= target_mass || floor == min_weight) break;
  }
  // Sort only as much of the order as the nucleus needs: select and sort
  // growing chunks (64, 256, 1024, ...) until the mass reaches the target.
  const size_t n = candidates_.size();
  size_t sorted = 0;
  size_t keep = n;
  size_t chunk = 64;
  double cum = 0.0;
  while (sorted < n && keep == n) {
    const size_t end = std::min(n, sorted + chunk);
    auto first = candidates_.begin();
    if (end < n) std::nth_element(first + sorted, first + end, candidates_.end(), Better);
    std::sort(first + sorted, first + end, Better);
    for (size_t j = sorted; j < end; ++j) {
      cum += weights_[candidates_[j].id];
      if (cum >= target_mass) {
        keep = j + 1;
        break;
      }
    }
    sorted = end;
    chunk *= 4;
  }
  for (size_t j = 0; j < keep; ++j) candidates_[j].logit = weights_[candidates_[j].id];
  BuildSupport(candidates_, keep, vocab_size_, out);
}

SampledToken Sampler::Annotate(int32_t token) {
  CAIRN_CHECK(token >= 0 && token < vocab_size_ && processed_.size() == static_cast<size_t>(vocab_size_));
  SampledToken result;
  result.token = token;
  if (!params_.logprobs) return result;
  if (!log_norm_valid_) {
    const int32_t best = ArgmaxLogit(processed_);
    if (best < 0) FailNoToken();
    const float max_logit = processed_[best];
    weights_.resize(vocab_size_);
    for (int32_t i = 0; i < vocab_size_; ++i) weights_[i] = FastExp(processed_[i] - max_logit);
    log_norm_ = max_logit + std::log(SumInLanes(weights_));
    log_norm_valid_ = true;
  }
  result.logprob = static_cast<float>(processed_[token] - log_norm_);
  if (params_.top_logprobs > 0) {
    SelectTopTokens(processed_, static_cast<size_t>(params_.top_logprobs), &top_scratch_);
    result.top_logprobs.reserve(top_scratch_.size());
    for (const Candidate& c : top_scratch_) {
      result.top_logprobs.push_back({c.id, static_cast<float>(c.logit - log_norm_)});
    }
  }
  return result;
}

}  // namespace cairn::sampling
