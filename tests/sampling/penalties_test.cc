#include "sampling/penalties.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "sampling/token_history.h"

namespace cairn::sampling {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::vector<float> Apply(const SamplingParams& params, const TokenHistory& history,
                         std::vector<float> logits, std::vector<int32_t> eos = {}) {
  params.Validate(static_cast<int32_t>(logits.size()));
  PenaltyApplier applier(params, static_cast<int32_t>(logits.size()), std::move(eos));
  applier.Apply(history, logits);
  return logits;
}

TEST(PenaltiesTest, NeutralParamsChangeNothing) {
  SamplingParams params;
  const std::vector<float> logits = {1.0f, -2.0f, 3.0f, 0.5f};
  TokenHistory history(std::vector<int32_t>{0, 1, 2});
  history.Append(2);
  PenaltyApplier applier(params, 4, {3});
  EXPECT_FALSE(applier.active());
  EXPECT_EQ(Apply(params, history, logits, {3}), logits);
}

// OpenAI: logit -= count * frequency + (count > 0) * presence, over generated tokens only.
TEST(PenaltiesTest, PresenceAndFrequencyCountGeneratedTokensOnly) {
  SamplingParams params;
  params.presence_penalty = 0.5f;
  params.frequency_penalty = 0.25f;
  TokenHistory history(std::vector<int32_t>{0, 0, 0});  // prompt: ignored
  history.Append(1);
  history.Append(2);
  history.Append(1);
  const std::vector<float> got = Apply(params, history, {1.0f, 1.0f, 1.0f, 1.0f});
  EXPECT_FLOAT_EQ(got[0], 1.0f);
  EXPECT_FLOAT_EQ(got[1], 1.0f - 2 * 0.25f - 0.5f);
  EXPECT_FLOAT_EQ(got[2], 1.0f - 0.25f - 0.5f);
  EXPECT_FLOAT_EQ(got[3], 1.0f);
}

// llama.cpp/HF: positive logits divided, non-positive multiplied, once per
// distinct token in the last repeat_last_n tokens (prompt included).
TEST(PenaltiesTest, RepetitionPenaltyWindowIncludesPromptAndCountsOnce) {
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  params.repeat_last_n = 3;
  TokenHistory history(std::vector<int32_t>{4, 1, 1});
  history.Append(2);  // window = {1, 1, 2}; token 4 is outside it
  const std::vector<float> got = Apply(params, history, {1.0f, 3.0f, -3.0f, 5.0f, 8.0f});
  EXPECT_FLOAT_EQ(got[0], 1.0f);
  EXPECT_FLOAT_EQ(got[1], 1.5f);   // once, not twice
  EXPECT_FLOAT_EQ(got[2], -6.0f);
  EXPECT_FLOAT_EQ(got[3], 5.0f);
  EXPECT_FLOAT_EQ(got[4], 8.0f);

  params.repeat_last_n = -1;  // whole context
  EXPECT_FLOAT_EQ(Apply(params, history, {1.0f, 3.0f, -3.0f, 5.0f, 8.0f})[4], 4.0f);
  params.repeat_last_n = 0;  // off
  EXPECT_FLOAT_EQ(Apply(params, history, {1.0f, 3.0f, -3.0f, 5.0f, 8.0f})[1], 3.0f);
}

TEST(PenaltiesTest, LogitBiasAddsAndMinus100Bans) {
  SamplingParams params;
  params.logit_bias = {{0, -100.0f}, {1, 2.5f}, {2, -1.0f}, {3, 100.0f}};
  const std::vector<float> got = Apply(params, TokenHistory(), {1.0f, 1.0f, 1.0f, 1.0f, 1.0f});
  EXPECT_EQ(got[0], kNegInf);
  EXPECT_FLOAT_EQ(got[1], 3.5f);
  EXPECT_FLOAT_EQ(got[2], 0.0f);
  EXPECT_FLOAT_EQ(got[3], 101.0f);
  EXPECT_FLOAT_EQ(got[4], 1.0f);
}

TEST(PenaltiesTest, IgnoreEosBansEveryEosToken) {
  SamplingParams params;
  params.ignore_eos = true;
  const std::vector<float> got = Apply(params, TokenHistory(), {9.0f, 1.0f, 9.0f}, {0, 2});
  EXPECT_EQ(got[0], kNegInf);
  EXPECT_FLOAT_EQ(got[1], 1.0f);
  EXPECT_EQ(got[2], kNegInf);
}

TEST(PenaltiesTest, RollbackRestoresCounts) {
  TokenHistory history(std::vector<int32_t>{7});
  history.Append(1);
  history.Append(2);
  history.Append(2);
  history.TruncateGenerated(1);
  EXPECT_EQ(history.generated_size(), 1u);
  EXPECT_EQ(history.generated_counts().size(), 1u);
  EXPECT_EQ(history.generated_counts().at(1), 1);
  EXPECT_EQ(history.tokens().size(), 2u);
}

TEST(PenaltiesTest, OutOfVocabHistoryTokenThrows) {
  SamplingParams params;
  params.frequency_penalty = 1.0f;
  TokenHistory history;
  history.Append(10);
  PenaltyApplier applier(params, 4, {});
  std::vector<float> logits(4, 0.0f);
  EXPECT_THROW(applier.Apply(history, logits), Error);
}

}  // namespace
}  // namespace cairn::sampling
