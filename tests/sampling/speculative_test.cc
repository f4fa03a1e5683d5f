#include "sampling/speculative.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "test_util.h"

namespace cairn::sampling {
namespace {

using test::RandomLogits;

constexpr int32_t kVocab = 8;
// chi-square 0.999 quantiles: with a fixed seed each test is deterministic;
// a correct implementation exceeds these with probability 0.001.
constexpr double kChi2Q999Df5 = 20.52;
constexpr double kChi2Q999Df35 = 66.62;

int64_t Trials() { return test::Sanitized() ? 20000 : 200000; }

// Target: temperature, top_k truncation (zeros in p) and a presence penalty, so
// row 1's distribution depends on the first emitted token through the history.
SamplingParams TargetParams() {
  SamplingParams params;
  params.temperature = 0.9f;
  params.top_k = 6;
  params.presence_penalty = 0.7f;
  params.seed = 2024;
  return params;
}

// Raw logits of the target: row 0, and row 1 as a function of the token before it.
struct TargetModel {
  std::vector<float> row0 = RandomLogits(kVocab, 100, 1.0f);
  std::vector<std::vector<float>> row1;
  std::vector<float> row2 = RandomLogits(kVocab, 300, 1.0f);
  TargetModel() {
    for (int32_t a = 0; a < kVocab; ++a) row1.push_back(RandomLogits(kVocab, 200 + a, 1.0f));
  }
  std::vector<float> Rows(int32_t x0) const {
    std::vector<float> rows = row0;
    rows.insert(rows.end(), row1[x0].begin(), row1[x0].end());
    rows.insert(rows.end(), row2.begin(), row2.end());
    return rows;
  }
};

const std::vector<int32_t> kPrompt = {1, 2};

// Exact joint law of the first two tokens of sequential decoding from p.
std::vector<double> SequentialJoint(const TargetModel& model) {
  Sampler sampler(TargetParams(), kVocab);
  Distribution p0, p1;
  TokenHistory history(kPrompt);
  sampler.ComputeDistribution(model.row0, history, &p0);
  std::vector<double> joint(kVocab * kVocab, 0.0);
  for (int32_t a = 0; a < kVocab; ++a) {
    history.Append(a);
    sampler.ComputeDistribution(model.row1[a], history, &p1);
    history.TruncateGenerated(0);
    for (int32_t b = 0; b < kVocab; ++b) joint[a * kVocab + b] = p0.Prob(a) * p1.Prob(b);
  }
  return joint;
}

// Drafter: either sampled q's (q0, and q1 depending on x0) or deterministic
// lookup-style drafts (one-hot q).
struct Drafter {
  bool one_hot = false;
  Distribution q0;
  std::vector<Distribution> q1;
  Drafter(bool one_hot_drafts) : one_hot(one_hot_drafts) {
    std::vector<float> w = RandomLogits(kVocab, 400, 1.0f);
    for (float& x : w) x = 1.2f + x;  // positive weights, full support
    q0 = Distribution::FromWeights(w);
    for (int32_t a = 0; a < kVocab; ++a) {
      std::vector<float> wa = RandomLogits(kVocab, 500 + a, 1.0f);
      for (float& x : wa) x = 1.1f + x;
      q1.push_back(Distribution::FromWeights(wa));
    }
  }
  std::vector<DraftToken> Draft(Rng& rng) const {
    if (one_hot) return {{3, nullptr}, {5, nullptr}};  // a fixed "lookup" continuation
    const int32_t x0 = q0.Sample(rng);
    return {{x0, &q0}, {q1[x0].Sample(rng), &q1[x0]}};
  }
};

// Runs `Trials()` speculative rounds; the first two emitted tokens (the second
// from a plain next step when the round emitted only one) are tallied.
void ExpectSpeculationMatchesSequential(bool one_hot) {
  const TargetModel model;
  const Drafter drafter(one_hot);
  Sampler sampler(TargetParams(), kVocab);
  Rng draft_rng(2024, /*stream=*/1);
  const int64_t trials = Trials();
  std::vector<int64_t> first(kVocab, 0), joint(kVocab * kVocab, 0);
  int64_t accepted = 0;
  for (int64_t t = 0; t < trials; ++t) {
    const std::vector<DraftToken> drafts = drafter.Draft(draft_rng);
    TokenHistory history(kPrompt);
    const VerifyResult result = VerifyDraft(sampler, history, model.Rows(drafts[0].token), drafts);
    accepted += result.num_accepted;
    const int32_t a = result.tokens[0].token;
    int32_t b = -1;
    if (result.tokens.size() >= 2) {
      b = result.tokens[1].token;
    } else {
      b = sampler.Sample(model.row1[a], history).token;
    }
    ++first[a];
    ++joint[a * kVocab + b];
  }
  const std::vector<double> want_joint = SequentialJoint(model);
  std::vector<double> want_first(kVocab, 0.0);
  for (int32_t a = 0; a < kVocab; ++a) {
    for (int32_t b = 0; b < kVocab; ++b) want_first[a] += want_joint[a * kVocab + b];
  }
  int dof = 0;
  const double chi2_first = test::ChiSquare(first, want_first, trials, &dof);
  EXPECT_EQ(dof, 5);
  EXPECT_LT(chi2_first, kChi2Q999Df5);
  const double chi2_joint = test::ChiSquare(joint, want_joint, trials, &dof);
  EXPECT_EQ(dof, 35);
  EXPECT_LT(chi2_joint, kChi2Q999Df35);
  EXPECT_GT(accepted, 0);  // the test exercised both branches
  EXPECT_LT(accepted, 2 * trials);
}

TEST(SpeculativeTest, SampledDraftsReproduceTargetDistribution) { ExpectSpeculationMatchesSequential(false); }

TEST(SpeculativeTest, OneHotLookupDraftsReproduceTargetDistribution) { ExpectSpeculationMatchesSequential(true); }

// A one-hot draft on a token the target has truncated away is always
// rejected, and the replacement still follows p.
TEST(SpeculativeTest, ImpossibleDraftIsRejectedAndResidualIsP) {
  const TargetModel model;
  Sampler sampler(TargetParams(), kVocab);
  Distribution p;
  sampler.ComputeDistribution(model.row0, TokenHistory(kPrompt), &p);
  int32_t impossible = -1;
  for (int32_t i = 0; i < kVocab; ++i) {
    if (p.Prob(i) == 0.0f) impossible = i;
  }
  ASSERT_GE(impossible, 0);
  const int64_t trials = Trials() / 4;
  std::vector<int64_t> counts(kVocab, 0);
  for (int64_t t = 0; t < trials; ++t) {
    const AcceptDecision d = AcceptOrResample(p, {impossible, nullptr}, sampler.rng());
    ASSERT_FALSE(d.accepted);
    ++counts[d.token];
  }
  const std::vector<float> dense = p.ToDense();
  int dof = 0;
  EXPECT_LT(test::ChiSquare(counts, std::vector<double>(dense.begin(), dense.end()), trials, &dof), kChi2Q999Df5);
}

TEST(SpeculativeTest, DraftEqualToTargetIsAlwaysAcceptedAndRngUseIsDocumented) {
  const TargetModel model;
  Sampler sampler(TargetParams(), kVocab);
  Sampler reference(TargetParams(), kVocab);
  Distribution p0, p1;
  TokenHistory history(kPrompt);
  reference.ComputeDistribution(model.row0, history, &p0);
  const int32_t x0 = p0.Argmax();
  history.Append(x0);
  reference.ComputeDistribution(model.row1[x0], history, &p1);
  const int32_t x1 = p1.Argmax();
  history.TruncateGenerated(0);

  const std::vector<DraftToken> drafts = {{x0, &p0}, {x1, &p1}};  // q == p: accept probability 1
  const VerifyResult r = VerifyDraft(sampler, history, model.Rows(x0), drafts);
  EXPECT_EQ(r.num_accepted, 2);
  ASSERT_EQ(r.tokens.size(), 3u);
  EXPECT_EQ(history.generated_size(), 3u);
  // Two accept tests + one bonus sample = three Uniform() draws.
  Rng expected(*TargetParams().seed);
  for (int i = 0; i < 3; ++i) expected.NextU64();
  EXPECT_EQ(sampler.rng().NextU64(), expected.NextU64());

  // Rejection at position 0: one accept test + one residual sample.
  Sampler rejecting(TargetParams(), kVocab);
  int32_t impossible = 0;
  while (p0.Prob(impossible) > 0.0f) ++impossible;
  TokenHistory fresh(kPrompt);
  const std::vector<DraftToken> bad = {{impossible, nullptr}, {x1, nullptr}};
  const VerifyResult rr = VerifyDraft(rejecting, fresh, model.Rows(impossible), bad);
  EXPECT_EQ(rr.num_accepted, 0);
  EXPECT_EQ(rr.tokens.size(), 1u);
  Rng expected2(*TargetParams().seed);
  for (int i = 0; i < 2; ++i) expected2.NextU64();
  EXPECT_EQ(rejecting.rng().NextU64(), expected2.NextU64());
}

// Greedy verification equals plain greedy decoding and draws nothing.
TEST(SpeculativeTest, GreedyAcceptsWhileDraftIsArgmax) {
  const TargetModel model;
  SamplingParams params = TargetParams();
  params.temperature = 0.0f;
  Sampler plain(params, kVocab);
  TokenHistory seq(kPrompt);
  const int32_t g0 = plain.Sample(model.row0, seq).token;
  seq.Append(g0);
  const int32_t g1 = plain.Sample(model.row1[g0], seq).token;
  seq.Append(g1);
  const int32_t g2 = plain.Sample(model.row2, seq).token;

  Sampler spec(params, kVocab);
  TokenHistory h1(kPrompt);
  const VerifyResult all = VerifyDraft(spec, h1, model.Rows(g0), std::vector<DraftToken>{{g0}, {g1}});
  EXPECT_EQ(all.num_accepted, 2);
  ASSERT_EQ(all.tokens.size(), 3u);
  EXPECT_EQ(all.tokens[2].token, g2);

  const int32_t wrong = (g1 + 1) % kVocab;
  TokenHistory h2(kPrompt);
  const VerifyResult part = VerifyDraft(spec, h2, model.Rows(g0), std::vector<DraftToken>{{g0}, {wrong}});
  EXPECT_EQ(part.num_accepted, 1);
  ASSERT_EQ(part.tokens.size(), 2u);
  EXPECT_EQ(part.tokens[1].token, g1);
  EXPECT_EQ(std::vector<int32_t>(h2.generated().begin(), h2.generated().end()), (std::vector<int32_t>{g0, g1}));

  Rng fresh(*params.seed);
  EXPECT_EQ(spec.rng().NextU64(), fresh.NextU64());
}

TEST(SpeculativeTest, BadShapesThrow) {
  Sampler sampler(TargetParams(), kVocab);
  TokenHistory history(kPrompt);
  const std::vector<float> one_row = RandomLogits(kVocab, 1);
  EXPECT_THROW(VerifyDraft(sampler, history, one_row, std::vector<DraftToken>{{1}}), Error);
  const Distribution q = Distribution::OneHot(kVocab, 2);
  Distribution p;
  sampler.ComputeDistribution(one_row, history, &p);
  EXPECT_THROW(AcceptOrResample(p, {3, &q}, sampler.rng()), Error);  // q(3) == 0
}

}  // namespace
}  // namespace cairn::sampling
