#include "sampling/penalties.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace cairn::sampling {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

void CheckToken(int32_t token, int32_t vocab_size) {
  if (token < 0 || token >= vocab_size) {
    Fail("sampling: history token {} is outside the vocabulary [0, {})", token, vocab_size);
  }
}

}  // namespace

PenaltyApplier::PenaltyApplier(const SamplingParams& params, int32_t vocab_size,
                               std::vector<int32_t> eos_tokens)
    : params_(params), vocab_size_(vocab_size), eos_tokens_(std::move(eos_tokens)) {
  for (int32_t eos : eos_tokens_) {
    if (eos < 0 || eos >= vocab_size) Fail("sampling: eos token {} is outside the vocabulary", eos);
  }
  const bool repetition = params.repetition_penalty != 1.0f && params.repeat_last_n != 0;
  active_ = repetition || params.presence_penalty != 0.0f || params.frequency_penalty != 0.0f ||
            !params.logit_bias.empty() || (params.ignore_eos && !eos_tokens_.empty());
}

void PenaltyApplier::Apply(const TokenHistory& history, std::span<float> logits) {
  CAIRN_CHECK(static_cast<int32_t>(logits.size()) == vocab_size_);
  if (!active_) return;

  const float r = params_.repetition_penalty;
  if (r != 1.0f && params_.repeat_last_n != 0) {
    std::span<const int32_t> all = history.tokens();
    const size_t window = params_.repeat_last_n < 0
                              ? all.size()
                              : std::min(all.size(), static_cast<size_t>(params_.repeat_last_n));
    if (stamp_.empty()) stamp_.assign(vocab_size_, 0);
    if (++epoch_ == 0) {  // wrapped: clear stale stamps
      std::fill(stamp_.begin(), stamp_.end(), 0);
      epoch_ = 1;
    }
    for (int32_t token : all.last(window)) {
      CheckToken(token, vocab_size_);
      if (stamp_[token] == epoch_) continue;  // each distinct token once
      stamp_[token] = epoch_;
      float& l = logits[token];
      l = l > 0.0f ? l / r : l * r;
    }
  }

  if (params_.presence_penalty != 0.0f || params_.frequency_penalty != 0.0f) {
    for (const auto& [token, count] : history.generated_counts()) {
      CheckToken(token, vocab_size_);
      logits[token] -= static_cast<float>(count) * params_.frequency_penalty + params_.presence_penalty;
    }
  }

  for (const auto& [token, bias] : params_.logit_bias) {
    logits[token] = bias <= -100.0f ? kNegInf : logits[token] + bias;
  }

  if (params_.ignore_eos) {
    for (int32_t eos : eos_tokens_) logits[eos] = kNegInf;
  }
}

}  // namespace cairn::sampling
