// Rollback equivalence at every accept length: after a verify pass over
// [x, d_1..d_k] rolled back to [x, d_1..d_j], the state's next logits are
// bit-identical to a state that only ever processed the accepted tokens, and
// the recurrent buffer bytes are identical.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "model/verify_capture.h"
#include "spec/speculative_decoder.h"
#include "spec_test_util.h"

namespace cairn::spec {
namespace {

using test::NextLogits;
using test::Pool;
using test::TinyModel;

class RollbackEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(RollbackEquivalence, EveryAcceptLengthEqualsAPassOverAcceptedTokens) {
  const model::Model& m = TinyModel(GetParam());
  const std::vector<int32_t> prompt = test::Prompt(2, 20);
  const std::vector<int32_t> block = {501, 7702, 33, 1900, 12345};  // x, d_1..d_4
  const int k = static_cast<int>(block.size()) - 1;
  const int32_t next = 4242;
  for (int j = 0; j <= k; ++j) {
    auto spec_state = m.NewState();
    Prefill(m, *spec_state, prompt, false, Pool());
    model::VerifyCapture capture;
    model::ForwardRequest req;
    req.tokens = block;
    req.all_logits = true;
    req.verify = &capture;
    model::ForwardResult r;
    m.Forward(*spec_state, req, &r, Pool());
    m.RollbackVerify(*spec_state, capture, j + 1, Pool());

    auto plain_state = m.NewState();
    std::vector<int32_t> accepted(prompt);
    accepted.insert(accepted.end(), block.begin(), block.begin() + j + 1);
    Prefill(m, *plain_state, accepted, false, Pool());

    ASSERT_EQ(spec_state->n_tokens(), plain_state->n_tokens()) << "j=" << j;
    ASSERT_EQ(spec_state->recurrent_floats(), plain_state->recurrent_floats());
    if (spec_state->recurrent_floats() > 0) {
      EXPECT_EQ(std::memcmp(spec_state->recurrent(), plain_state->recurrent(),
                            spec_state->recurrent_floats() * sizeof(float)),
                0)
          << "recurrent state differs after rollback to j=" << j;
    }
    const std::vector<float> a = NextLogits(m, *spec_state, next);
    const std::vector<float> b = NextLogits(m, *plain_state, next);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "logits differ, j=" << j;
  }
}

// Precondition of every exactness property: a token's logits do not depend
// on how the tokens before it were batched (one pass vs token by token).
TEST_P(RollbackEquivalence, DecodeStepsEqualOneBatchedPass) {
  const model::Model& m = TinyModel(GetParam());
  const std::vector<int32_t> prompt = test::Prompt(2, 20);
  const std::vector<int32_t> tail = {501, 7702, 33};
  auto batched = m.NewState();
  std::vector<int32_t> all(prompt);
  all.insert(all.end(), tail.begin(), tail.end());
  const PrefillOutput a = Prefill(m, *batched, all, false, Pool());
  auto stepped = m.NewState();
  Prefill(m, *stepped, prompt, false, Pool());
  std::vector<float> b;
  for (int32_t t : tail) b = NextLogits(m, *stepped, t);
  ASSERT_EQ(a.last_logits.size(), b.size());
  float worst = 0.0f;
  for (size_t i = 0; i < b.size(); ++i) worst = std::max(worst, std::fabs(a.last_logits[i] - b[i]));
  EXPECT_EQ(worst, 0.0f) << "max |logit difference| between batched and token-by-token passes";
}

INSTANTIATE_TEST_SUITE_P(Archs, RollbackEquivalence, ::testing::Values("llama", "qwen3", "qwen35"));

}  // namespace
}  // namespace cairn::spec
