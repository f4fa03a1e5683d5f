#include "sampling/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "sampling/fast_exp.h"
#include "test_util.h"

namespace cairn::sampling {
namespace {

using test::RandomLogits;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

SamplingParams Greedy() {
  SamplingParams params;
  params.temperature = 0.0f;
  params.seed = 1;
  return params;
}

TEST(SamplerTest, GreedyIsArgmaxWithLowestIdTieBreakAndDrawsNothing) {
  Sampler sampler(Greedy(), 6);
  const std::vector<float> logits = {1.0f, 5.0f, 2.0f, 5.0f, kNegInf, 5.0f};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(sampler.Sample(logits, TokenHistory()).token, 1);
  Rng fresh(1);
  EXPECT_EQ(sampler.rng().NextU64(), fresh.NextU64());  // no Uniform() consumed
}

TEST(SamplerTest, GreedyIsArgmaxOfProcessedLogits) {
  SamplingParams params = Greedy();
  params.frequency_penalty = 1.0f;
  params.logit_bias = {{2, 0.75f}};
  Sampler sampler(params, 4);
  TokenHistory history;
  history.Append(0);
  // Raw argmax is 0 (3.0), penalised to 2.0; token 2 is 1.5 + 0.75 = 2.25.
  EXPECT_EQ(sampler.Sample(std::vector<float>{3.0f, 2.0f, 1.5f, 0.0f}, history).token, 2);
}

TEST(SamplerTest, NanIsNeverChosenAndAllBannedThrows) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Sampler greedy(Greedy(), 3);
  EXPECT_EQ(greedy.Sample(std::vector<float>{nan, 1.0f, nan}, TokenHistory()).token, 1);
  EXPECT_THROW(greedy.Sample(std::vector<float>{nan, kNegInf, nan}, TokenHistory()), Error);
  EXPECT_THROW(greedy.Sample(std::vector<float>{1.0f, 2.0f}, TokenHistory()), Error);  // wrong size
  SamplingParams params;
  params.seed = 3;
  params.logit_bias = {{0, -100.0f}, {1, -100.0f}, {2, -100.0f}};
  Sampler banned(params, 3);
  EXPECT_THROW(banned.Sample(std::vector<float>{1.0f, 2.0f, 3.0f}, TokenHistory()), Error);
}

// Brute force: sort the whole vocabulary, then apply each filter literally.
std::vector<float> ReferenceDistribution(const std::vector<float>& logits, const SamplingParams& params) {
  const size_t n = logits.size();
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  size_t keep = n;
  if (params.top_k > 0) keep = std::min(keep, static_cast<size_t>(params.top_k));
  const float max_logit = logits[order[0]];
  std::vector<float> w(n);
  for (size_t j = 0; j < n; ++j) w[j] = FastExp((logits[order[j]] - max_logit) / params.temperature);
  if (params.top_p < 1.0f) {
    double total = 0.0;
    for (size_t j = 0; j < keep; ++j) total += w[j];
    double cum = 0.0;
    for (size_t j = 0; j < keep; ++j) {
      cum += w[j];
      if (cum >= params.top_p * total) {
        keep = j + 1;
        break;
      }
    }
  }
  std::vector<float> dense(n, 0.0f);
  double sum = 0.0;
  for (size_t j = 0; j < keep; ++j) {
    if (w[j] > 0.0f && w[j] >= params.min_p) sum += w[j];
  }
  for (size_t j = 0; j < keep; ++j) {
    if (w[j] > 0.0f && w[j] >= params.min_p) dense[order[j]] = static_cast<float>(w[j] / sum);
  }
  return dense;
}

TEST(SamplerTest, TruncationMatchesBruteForce) {
  const int32_t kTopK[] = {0, 1, 7, 64, 300, 5000};
  const float kTopP[] = {1.0f, 0.95f, 0.5f, 0.05f};
  const float kMinP[] = {0.0f, 0.02f, 0.3f};
  const float kTemp[] = {0.3f, 1.0f, 2.5f};
  int cases = 0;
  for (int32_t vocab : {1000, 20000}) {
    uint64_t seed = static_cast<uint64_t>(vocab);
    for (int32_t top_k : kTopK) {
      for (float top_p : kTopP) {
        for (float min_p : kMinP) {
          for (float temp : kTemp) {
            SamplingParams params;
            params.top_k = top_k;
            params.top_p = top_p;
            params.min_p = min_p;
            params.temperature = temp;
            params.seed = 0;
            std::vector<float> logits = RandomLogits(vocab, ++seed, 6.0f);
            logits[5] = logits[6] = 7.0f;  // a tie at the top
            Sampler sampler(params, vocab);
            Distribution p;
            sampler.ComputeDistribution(logits, TokenHistory(), &p);
            const std::vector<float> want = ReferenceDistribution(logits, params);
            const std::vector<float> got = p.ToDense();
            for (int32_t i = 0; i < vocab; ++i) {
              ASSERT_EQ(got[i] > 0.0f, want[i] > 0.0f)
                  << "token " << i << " k=" << top_k << " p=" << top_p << " min_p=" << min_p << " T=" << temp;
              ASSERT_NEAR(got[i], want[i], 1e-6f * want[i] + 1e-12f);
            }
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 6 * 4 * 3 * 3);
}

TEST(SamplerTest, TopKOneIsGreedyTieBreak) {
  SamplingParams params;
  params.top_k = 1;
  params.seed = 9;
  Sampler sampler(params, 4);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(sampler.Sample(std::vector<float>{0.0f, 2.0f, 2.0f, 1.0f}, TokenHistory()).token, 1);
  }
}

// A short generation whose logits depend on the previous token.
std::vector<int32_t> Generate(const SamplingParams& params, int steps) {
  constexpr int32_t kVocab = 500;
  Sampler sampler(params, kVocab);
  TokenHistory history(std::vector<int32_t>{1, 2, 3});
  for (int i = 0; i < steps; ++i) {
    const std::vector<float> logits = RandomLogits(kVocab, 1000 + history.tokens().back(), 3.0f);
    history.Append(sampler.Sample(logits, history).token);
  }
  const std::span<const int32_t> generated = history.generated();
  return {generated.begin(), generated.end()};
}

TEST(SamplerTest, SameSeedSameSequenceDifferentSeedDifferent) {
  SamplingParams params;
  params.temperature = 0.9f;
  params.top_p = 0.95f;
  params.frequency_penalty = 0.3f;
  params.seed = 1234;
  const std::vector<int32_t> a = Generate(params, 200);
  EXPECT_EQ(a, Generate(params, 200));
  params.seed = 1235;
  EXPECT_NE(a, Generate(params, 200));
}

TEST(SamplerTest, SampleFrequenciesMatchDistribution) {
  SamplingParams params;
  params.temperature = 0.8f;
  params.top_k = 6;
  params.seed = 77;
  const std::vector<float> logits = RandomLogits(8, 5, 2.0f);
  Sampler sampler(params, 8);
  Distribution p;
  sampler.ComputeDistribution(logits, TokenHistory(), &p);
  const int64_t trials = test::Sanitized() ? 20000 : 200000;
  std::vector<int64_t> counts(8, 0);
  for (int64_t t = 0; t < trials; ++t) ++counts[sampler.Sample(logits, TokenHistory()).token];
  const std::vector<float> dense = p.ToDense();
  int dof = 0;
  const double chi2 = test::ChiSquare(counts, std::vector<double>(dense.begin(), dense.end()), trials, &dof);
  EXPECT_EQ(dof, 5);
  EXPECT_LT(chi2, 20.52);  // chi-square(5) 0.999 quantile
}

// Logprobs are the log-softmax of the penalised logits, independent of
// temperature and truncation.
TEST(SamplerTest, LogprobsAreLogSoftmaxOfProcessedLogits) {
  constexpr int32_t kVocab = 20;
  const std::vector<float> logits = RandomLogits(kVocab, 11, 5.0f);
  SamplingParams params;
  params.temperature = 0.4f;
  params.top_k = 3;
  params.presence_penalty = 1.0f;
  params.logprobs = true;
  params.top_logprobs = kVocab;
  params.seed = 5;
  TokenHistory history;
  history.Append(4);
  Sampler sampler(params, kVocab);
  const SampledToken s = sampler.Sample(logits, history);

  std::vector<double> processed(logits.begin(), logits.end());
  processed[4] -= 1.0;
  double max = *std::max_element(processed.begin(), processed.end());
  double sum = 0.0;
  for (double l : processed) sum += std::exp(l - max);
  const double lse = max + std::log(sum);

  EXPECT_NEAR(s.logprob, processed[s.token] - lse, 1e-5);
  ASSERT_EQ(s.top_logprobs.size(), static_cast<size_t>(kVocab));
  double mass = 0.0;
  for (size_t i = 0; i < s.top_logprobs.size(); ++i) {
    const TokenLogprob& t = s.top_logprobs[i];
    EXPECT_NEAR(t.logprob, processed[t.token] - lse, 1e-5);
    if (i > 0) {
      EXPECT_GE(s.top_logprobs[i - 1].logprob, t.logprob);
    }
    mass += std::exp(static_cast<double>(t.logprob));
  }
  EXPECT_NEAR(mass, 1.0, 1e-5);
}

TEST(SamplerTest, NoLogprobsUnlessRequested) {
  SamplingParams params;
  params.seed = 5;
  Sampler sampler(params, 10);
  const SampledToken s = sampler.Sample(RandomLogits(10, 3), TokenHistory());
  EXPECT_EQ(s.logprob, 0.0f);
  EXPECT_TRUE(s.top_logprobs.empty());
}

TEST(SamplerTest, ConstructorValidates) {
  SamplingParams params;
  params.top_k = -1;
  EXPECT_THROW(Sampler(params, 10), Error);
  EXPECT_THROW(Sampler(SamplingParams(), 10, {10}), Error);  // eos outside vocab
}

}  // namespace
}  // namespace cairn::sampling
