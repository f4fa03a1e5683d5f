#include "sampling/sampling_params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "core/error.h"

namespace cairn::sampling {
namespace {

constexpr int32_t kVocab = 100;

// Expects Validate to throw cairn::Error whose message names `field`.
void ExpectRejected(const std::function<void(SamplingParams&)>& edit, const std::string& field) {
  SamplingParams params;
  edit(params);
  try {
    params.Validate(kVocab);
    ADD_FAILURE() << "accepted bad " << field;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(SamplingParamsTest, DefaultsAndEdgesAreValid) {
  SamplingParams params;
  EXPECT_NO_THROW(params.Validate(kVocab));
  params.temperature = 0.0f;
  params.top_k = 1000;  // larger than the vocabulary: clamps
  params.top_p = 1.0f;
  params.min_p = 1.0f;
  params.presence_penalty = -2.0f;
  params.frequency_penalty = 2.0f;
  params.repeat_last_n = -1;
  params.logit_bias = {{0, -100.0f}, {99, 100.0f}};
  params.max_tokens = 1;
  params.logprobs = true;
  params.top_logprobs = 20;
  EXPECT_NO_THROW(params.Validate(kVocab));
}

TEST(SamplingParamsTest, RejectsBadFieldsByName) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  ExpectRejected([](SamplingParams& p) { p.temperature = -0.1f; }, "temperature");
  ExpectRejected([&](SamplingParams& p) { p.temperature = nan; }, "temperature");
  ExpectRejected([&](SamplingParams& p) { p.temperature = inf; }, "temperature");
  ExpectRejected([](SamplingParams& p) { p.top_k = -1; }, "top_k");
  ExpectRejected([](SamplingParams& p) { p.top_p = 0.0f; }, "top_p");
  ExpectRejected([](SamplingParams& p) { p.top_p = 1.5f; }, "top_p");
  ExpectRejected([&](SamplingParams& p) { p.top_p = nan; }, "top_p");
  ExpectRejected([](SamplingParams& p) { p.min_p = -0.01f; }, "min_p");
  ExpectRejected([](SamplingParams& p) { p.min_p = 1.01f; }, "min_p");
  ExpectRejected([](SamplingParams& p) { p.presence_penalty = 2.5f; }, "presence_penalty");
  ExpectRejected([](SamplingParams& p) { p.frequency_penalty = -3.0f; }, "frequency_penalty");
  ExpectRejected([&](SamplingParams& p) { p.frequency_penalty = nan; }, "frequency_penalty");
  ExpectRejected([](SamplingParams& p) { p.repetition_penalty = 0.0f; }, "repetition_penalty");
  ExpectRejected([](SamplingParams& p) { p.repeat_last_n = -2; }, "repeat_last_n");
  ExpectRejected([](SamplingParams& p) { p.logit_bias = {{kVocab, 1.0f}}; }, "logit_bias");
  ExpectRejected([](SamplingParams& p) { p.logit_bias = {{-1, 1.0f}}; }, "logit_bias");
  ExpectRejected([](SamplingParams& p) { p.logit_bias = {{3, 101.0f}}; }, "logit_bias");
  ExpectRejected([](SamplingParams& p) { p.max_tokens = 0; }, "max_tokens");
  ExpectRejected([](SamplingParams& p) { p.logprobs = true, p.top_logprobs = 21; }, "top_logprobs");
  ExpectRejected([](SamplingParams& p) { p.top_logprobs = -1; }, "top_logprobs");
  ExpectRejected([](SamplingParams& p) { p.top_logprobs = 3; }, "top_logprobs");  // needs logprobs
}

}  // namespace
}  // namespace cairn::sampling
