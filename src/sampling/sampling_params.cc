#include "sampling/sampling_params.h"

#include <cmath>

#include "core/error.h"

namespace cairn::sampling {

void SamplingParams::Validate(int32_t vocab_size) const {
  if (vocab_size <= 0) Fail("sampling: vocab_size must be > 0 (got {})", vocab_size);
  if (!std::isfinite(temperature) || temperature < 0.0f) {
    Fail("sampling: temperature must be a finite number >= 0 (got {})", temperature);
  }
  if (top_k < 0) Fail("sampling: top_k must be >= 0, 0 disables it (got {})", top_k);
  if (!(top_p > 0.0f && top_p <= 1.0f)) Fail("sampling: top_p must be in (0, 1] (got {})", top_p);
  if (!(min_p >= 0.0f && min_p <= 1.0f)) Fail("sampling: min_p must be in [0, 1] (got {})", min_p);
  if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f)) {
    Fail("sampling: presence_penalty must be in [-2, 2] (got {})", presence_penalty);
  }
  if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f)) {
    Fail("sampling: frequency_penalty must be in [-2, 2] (got {})", frequency_penalty);
  }
  if (!std::isfinite(repetition_penalty) || repetition_penalty <= 0.0f) {
    Fail("sampling: repetition_penalty must be a finite number > 0 (got {})", repetition_penalty);
  }
  if (repeat_last_n < -1) {
    Fail("sampling: repeat_last_n must be -1 (whole context), 0 (off) or > 0 (got {})", repeat_last_n);
  }
  for (const auto& [token, bias] : logit_bias) {
    if (token < 0 || token >= vocab_size) {
      Fail("sampling: logit_bias token id {} is outside the vocabulary [0, {})", token, vocab_size);
    }
    if (!(bias >= -100.0f && bias <= 100.0f)) {
      Fail("sampling: logit_bias for token {} must be in [-100, 100] (got {})", token, bias);
    }
  }
  if (max_tokens && *max_tokens < 1) Fail("sampling: max_tokens must be >= 1 (got {})", *max_tokens);
  if (top_logprobs < 0 || top_logprobs > kMaxTopLogprobs) {
    Fail("sampling: top_logprobs must be in [0, {}] (got {})", kMaxTopLogprobs, top_logprobs);
  }
  if (top_logprobs > 0 && !logprobs) Fail("sampling: top_logprobs needs logprobs = true");
}

}  // namespace cairn::sampling
