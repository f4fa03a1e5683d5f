// Exact speculative sampling end to end: with temperature > 0 the token that a
// speculative round emits is distributed exactly as plain sampling's.
//
// Setup: the first emitted token t0 is pinned (the crafted last_logits row is
// one-hot), so the second token t1 — the first one a verify round decides —
// has the exact distribution p1 = target's processed distribution after
// prompt + t0 (top_k = 4, so 4 cells). Over 400 (one-hot q) or 200 (draft
// model q, whose drafter prefills per trial) seeds, the empirical counts
// of t1 are compared with p1 by Pearson chi-square, df = 3; the test fails
// above 16.27 (p = 0.001 under the null: one false alarm per thousand runs;
// the seed schedule is fixed, so the outcome is deterministic).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "spec/draft_model_drafter.h"
#include "spec/speculative_decoder.h"
#include "spec_test_util.h"

namespace cairn::spec {
namespace {

using test::Pool;
using test::TinyModel;

// Proposes one fixed token with one-hot q (like lookup).
class FixedDrafter : public Drafter {
 public:
  explicit FixedDrafter(int32_t token) : token_(token) {}
  std::string name() const override { return "fixed"; }
  void Begin(std::span<const int32_t>, std::span<const float>, int32_t) override {}
  void Propose(int max_k, std::vector<sampling::DraftToken>* d) override { d->assign(max_k, {token_, nullptr}); }
  void Accept(std::span<const int32_t>, std::span<const float>, int32_t) override {}

 private:
  int32_t token_;
};

sampling::SamplingParams Params(uint64_t seed) {
  sampling::SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 4;
  p.seed = seed;
  return p;
}

template <typename MakeDrafter>
void CheckDistribution(const model::Model& m, MakeDrafter make, const char* what, int full_trials) {
  const std::vector<int32_t> prompt = test::Prompt(4, 12);
  const int32_t t0 = 2024;
  std::vector<float> pinned(static_cast<size_t>(m.n_vocab()), -30.0f);
  pinned[t0] = 30.0f;

  // Exact p1.
  auto ref_state = m.NewState();
  std::vector<int32_t> with_t0 = prompt;
  with_t0.push_back(t0);
  const PrefillOutput ref = Prefill(m, *ref_state, with_t0, false, Pool());
  sampling::Sampler ref_sampler(Params(1), m.n_vocab());
  sampling::TokenHistory ref_history(prompt);
  ref_history.Append(t0);
  sampling::Distribution p1;
  ref_sampler.ComputeDistribution(ref.last_logits, ref_history, &p1);
  ASSERT_EQ(p1.support_size(), 4u);

  auto state = m.NewState();
  const PrefillOutput pre = Prefill(m, *state, prompt, false, Pool());
  const model::StateSnapshot snapshot = state->Snapshot();
  const int trials = test::Sanitized() ? 60 : full_trials;
  std::map<int32_t, int64_t> counts;
  for (int s = 0; s < trials; ++s) {
    state->Restore(snapshot);
    sampling::Sampler sampler(Params(1000 + s), m.n_vocab());
    sampling::TokenHistory history(prompt);
    auto drafter = make(static_cast<uint64_t>(s));
    DecodeOptions o;
    o.max_tokens = 3;  // t0, then one round with one draft
    o.cap = 1;
    const DecodeOutput out = DecodeSpeculative(m, *state, pinned, {}, sampler, history, *drafter, o, Pool());
    ASSERT_GE(out.tokens.size(), 2u);
    ASSERT_EQ(out.tokens[0].token, t0);
    ++counts[out.tokens[1].token];
  }
  double chi2 = 0.0;
  int64_t inside = 0;
  for (size_t i = 0; i < p1.support_size(); ++i) {
    const double e = p1.probs()[i] * trials;
    const double o = static_cast<double>(counts[p1.ids()[i]]);
    inside += counts[p1.ids()[i]];
    chi2 += (o - e) * (o - e) / e;
  }
  EXPECT_EQ(inside, trials) << what << ": a token outside the target's top-k support was emitted";
  EXPECT_LT(chi2, 16.27) << what << ": chi-square " << chi2 << " over " << trials << " trials";
}

TEST(SpeculativeSampling, OneHotDraftsKeepTheTargetDistribution) {
  const model::Model& m = TinyModel("qwen3");
  // Draft the target's second most likely token: accepted sometimes, rejected often.
  auto state = m.NewState();
  std::vector<int32_t> p = test::Prompt(4, 12);
  p.push_back(2024);
  const PrefillOutput ref = Prefill(m, *state, p, false, Pool());
  int32_t best = 0, second = -1;
  for (int32_t i = 1; i < m.n_vocab(); ++i) {
    if (ref.last_logits[i] > ref.last_logits[best]) {
      second = best;
      best = i;
    } else if (second < 0 || ref.last_logits[i] > ref.last_logits[second]) {
      second = i;
    }
  }
  CheckDistribution(m, [&](uint64_t) { return std::make_unique<FixedDrafter>(second); }, "one-hot q", 400);
}

TEST(SpeculativeSampling, DraftModelQKeepsTheTargetDistributionOnAHybrid) {
  const model::Model& m = TinyModel("qwen35");
  const model::Model& draft = TinyModel("qwen3", 2);
  CheckDistribution(
      m,
      [&](uint64_t seed) {
        DraftSampling ds{Params(seed), seed};
        return std::make_unique<DraftModelDrafter>(draft, m.n_vocab(), Pool(), ds);
      },
      "draft-model q", 200);
}

// Sampled drafts from a head cut to half the vocabulary: q is 0 past it.
TEST(SpeculativeSampling, CutDraftHeadKeepsTheTargetDistribution) {
  const model::Model& m = TinyModel("qwen35");
  const model::Model& draft = TinyModel("qwen3", 2);
  CheckDistribution(
      m,
      [&](uint64_t seed) {
        DraftSampling ds{Params(seed), seed};
        DraftModelOptions options;
        options.head_vocab = m.n_vocab() / 2;
        return std::make_unique<DraftModelDrafter>(draft, m.n_vocab(), Pool(), ds, options);
      },
      "draft-model q, cut head", 200);
}

}  // namespace
}  // namespace cairn::spec
