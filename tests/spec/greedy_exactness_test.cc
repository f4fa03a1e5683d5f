// Greedy speculative output equals plain greedy decoding token by token, for
// every drafter, on dense (llama, qwen3) and hybrid (qwen35) targets.
#include <gtest/gtest.h>

#include "core/error.h"
#include "spec/draft_model_drafter.h"
#include "spec/lookup_drafter.h"
#include "spec/mtp_drafter.h"
#include "spec/race.h"
#include "spec/speculative_decoder.h"
#include "spec_test_util.h"

namespace cairn::spec {
namespace {

using test::Pool;
using test::TinyModel;

int NumTokens() { return test::Sanitized() ? 8 : 32; }
int NumPrompts() { return test::Sanitized() ? 1 : 2; }

std::vector<int32_t> Ids(const DecodeOutput& out) {
  std::vector<int32_t> ids;
  for (const auto& t : out.tokens) ids.push_back(t.token);
  return ids;
}

sampling::SamplingParams Greedy() {
  sampling::SamplingParams p;
  p.temperature = 0.0f;
  return p;
}

std::vector<int32_t> Baseline(const model::Model& m, const std::vector<int32_t>& prompt, int n) {
  auto state = m.NewState();
  sampling::Sampler sampler(Greedy(), m.n_vocab());
  sampling::TokenHistory history(prompt);
  const PrefillOutput pre = Prefill(m, *state, prompt, false, Pool());
  DecodeOptions o;
  o.max_tokens = n;
  return Ids(DecodePlain(m, *state, pre.last_logits, sampler, history, o, Pool()));
}

DecodeOutput Speculative(const model::Model& m, const std::vector<int32_t>& prompt, Drafter& drafter, int n, int cap,
                         model::SequenceState* keep_state = nullptr) {
  auto state = m.NewState();
  model::SequenceState& st = keep_state ? *keep_state : *state;
  sampling::Sampler sampler(Greedy(), m.n_vocab());
  sampling::TokenHistory history(prompt);
  const PrefillOutput pre = Prefill(m, st, prompt, drafter.wants_target_hidden(), Pool());
  DecodeOptions o;
  o.max_tokens = n;
  o.cap = cap;
  DecodeOutput out = DecodeSpeculative(m, st, pre.last_logits, pre.hidden, sampler, history, drafter, o, Pool());
  // The state holds exactly prompt + output minus the last token.
  EXPECT_EQ(st.n_tokens(), static_cast<int64_t>(prompt.size() + out.tokens.size() - 1));
  return out;
}

class GreedyExactness : public ::testing::TestWithParam<std::string> {};

TEST_P(GreedyExactness, LookupRandomAndOracleDraftersMatchBaseline) {
  const model::Model& m = TinyModel(GetParam());
  for (int p = 0; p < NumPrompts(); ++p) {
    const std::vector<int32_t> prompt = test::Prompt(p);
    const std::vector<int32_t> base = Baseline(m, prompt, NumTokens());
    ASSERT_EQ(static_cast<int>(base.size()), NumTokens());
    for (int cap : {1, 4}) {
      LookupDrafter lookup;
      const DecodeOutput out = Speculative(m, prompt, lookup, NumTokens(), cap);
      EXPECT_EQ(Ids(out), base) << "lookup cap " << cap << " prompt " << p;
      EXPECT_GT(out.stats.accepted, 0) << "random models repeat; lookup should accept some drafts";
    }
    test::RandomDrafter random(m.n_vocab(), 7 + p);
    EXPECT_EQ(Ids(Speculative(m, prompt, random, NumTokens(), 3)), base) << "random drafts, prompt " << p;
    test::OracleDrafter oracle(base, 11 + p);
    const DecodeOutput out = Speculative(m, prompt, oracle, NumTokens(), 4);
    EXPECT_EQ(Ids(out), base) << "oracle drafts, prompt " << p;
    // Corrupting one offset in 0..k yields a spread of accept lengths.
    int lengths_seen = 0;
    for (int64_t c : out.stats.accept_histogram) lengths_seen += c > 0;
    EXPECT_GE(lengths_seen, 3) << out.stats.Summary();
  }
}

TEST_P(GreedyExactness, DraftModelMatchesBaseline) {
  const model::Model& m = TinyModel(GetParam());
  // A dense target gets a hybrid draft model and vice versa: both rollback paths.
  const model::Model& draft = TinyModel(GetParam() == "qwen35" ? "qwen3" : "qwen35", 2);
  for (int p = 0; p < NumPrompts(); ++p) {
    const std::vector<int32_t> prompt = test::Prompt(p);
    const std::vector<int32_t> base = Baseline(m, prompt, NumTokens());
    DraftModelDrafter drafter(draft, m.n_vocab(), Pool());
    const DecodeOutput out = Speculative(m, prompt, drafter, NumTokens(), 3);
    EXPECT_EQ(Ids(out), base) << "prompt " << p << " " << out.stats.Summary();
  }
}

// The target itself, narrowed to Q4_0 at load (--draft-quant), as the draft:
// it agrees with the target most of the time and differs sometimes, so both
// accepts and rejections happen; the output stays the target's.
TEST_P(GreedyExactness, NarrowedSelfDraftMatchesBaseline) {
  const model::Model& m = TinyModel(GetParam());
  const model::Model& draft = TinyModel(GetParam(), 1, false, DType::kQ4_0);
  ASSERT_EQ(draft.weights().layers[0].ffn.up.type, DType::kQ4_0);
  int64_t accepted = 0;
  for (int p = 0; p < NumPrompts(); ++p) {
    const std::vector<int32_t> prompt = test::Prompt(p);
    const std::vector<int32_t> base = Baseline(m, prompt, NumTokens());
    DraftModelDrafter drafter(draft, m.n_vocab(), Pool());
    const DecodeOutput out = Speculative(m, prompt, drafter, NumTokens(), 4);
    EXPECT_EQ(Ids(out), base) << "prompt " << p << " " << out.stats.Summary();
    accepted += out.stats.accepted;
  }
  EXPECT_GT(accepted, 0) << "a Q4_0 copy of the target should agree with it at least sometimes";
}

TEST(DraftNarrowType, OptionValues) {
  EXPECT_EQ(DraftNarrowType("auto"), DType::kQ4_0);
  EXPECT_EQ(DraftNarrowType("none"), std::nullopt);
  EXPECT_EQ(DraftNarrowType("iq4_nl"), DType::kIQ4_NL);
  EXPECT_EQ(DraftNarrowType("Q5_0"), DType::kQ5_0);
  EXPECT_THROW(DraftNarrowType("q4"), cairn::Error);
  EXPECT_THROW(DraftNarrowType(""), cairn::Error);
}

// A draft head cut to a fraction of the vocabulary (drafts never propose the
// ids past it) and early stops at unsure drafts change only speed.
TEST_P(GreedyExactness, DraftModelWithCutHeadAndEarlyStopsMatchesBaseline) {
  const model::Model& m = TinyModel(GetParam());
  const model::Model& draft = TinyModel(GetParam() == "qwen35" ? "qwen3" : "qwen35", 2);
  DraftModelOptions options;
  options.head_vocab = m.n_vocab() / 3;
  options.stop_margin = 1.0f;
  for (int p = 0; p < NumPrompts(); ++p) {
    const std::vector<int32_t> prompt = test::Prompt(p);
    const std::vector<int32_t> base = Baseline(m, prompt, NumTokens());
    DraftModelDrafter drafter(draft, m.n_vocab(), Pool(), {}, options);
    EXPECT_EQ(drafter.head_vocab(), (m.n_vocab() / 3 + 15) / 16 * 16);
    const DecodeOutput out = Speculative(m, prompt, drafter, NumTokens(), 4);
    EXPECT_EQ(Ids(out), base) << "prompt " << p << " " << out.stats.Summary();
  }
}

TEST(GreedyExactnessMtp, MtpMatchesBaselineOnHybrid) {
  const model::Model& m = TinyModel("qwen35", 3, /*mtp=*/true);
  ASSERT_TRUE(m.has_mtp());
  for (int p = 0; p < NumPrompts(); ++p) {
    const std::vector<int32_t> prompt = test::Prompt(p);
    const std::vector<int32_t> base = Baseline(m, prompt, NumTokens());
    for (int cap : {1, 3}) {
      if (p > 0 && cap == 1) continue;  // keep the suite short: cap 1 on the first prompt only
      MtpDrafter drafter(m, Pool());
      const DecodeOutput out = Speculative(m, prompt, drafter, NumTokens(), cap);
      EXPECT_EQ(Ids(out), base) << "cap " << cap << " prompt " << p << " " << out.stats.Summary();
    }
  }
}

TEST(GreedyExactnessAdaptive, ParkingAndProbingKeepTheOutput) {
  // Random drafts are always rejected: the controller parks at cap 0 (plain
  // rounds) and probes every kProbeEvery rounds; the output must not change.
  const model::Model& m = TinyModel("qwen35");
  const std::vector<int32_t> prompt = test::Prompt(0);
  const std::vector<int32_t> base = Baseline(m, prompt, NumTokens());
  VerifyCostCurve curve;
  for (int w = 1; w <= 16; ++w) curve.seconds.push_back(1.0 + 0.3 * (w - 1));
  CapController controller(curve, CapControllerOptions{});
  test::RandomDrafter random(m.n_vocab(), 5);
  auto state = m.NewState();
  sampling::Sampler sampler(Greedy(), m.n_vocab());
  sampling::TokenHistory history(prompt);
  const PrefillOutput pre = Prefill(m, *state, prompt, false, Pool());
  DecodeOptions o;
  o.max_tokens = NumTokens();
  o.controller = &controller;
  const DecodeOutput out = DecodeSpeculative(m, *state, pre.last_logits, {}, sampler, history, random, o, Pool());
  EXPECT_EQ(Ids(out), base);
  EXPECT_LT(controller.acceptance(), 0.6);
  if (!test::Sanitized()) {
    EXPECT_EQ(controller.current_cap(), 0) << out.stats.Summary();
  }
}

TEST(GreedyExactnessRace, RaceReportsIdenticalForEveryMode) {
  const model::Model& m = TinyModel("qwen35", 3, /*mtp=*/true);
  const model::Model& draft = TinyModel("qwen3", 2);
  RaceOptions o;
  o.modes = {SpecMode::kLookup, SpecMode::kDraft, SpecMode::kMtp, SpecMode::kAuto};
  o.max_tokens = test::Sanitized() ? 8 : 32;
  o.draft_model = &draft;
  const std::vector<int32_t> prompt = test::Prompt(1);
  const std::vector<RaceArm> arms = RunRace(m, prompt, o, Pool());
  ASSERT_EQ(arms.size(), 5u);
  for (const RaceArm& arm : arms) {
    EXPECT_TRUE(arm.identical) << SpecModeName(arm.mode) << " diverged at " << arm.divergence;
    EXPECT_EQ(arm.tokens.size(), static_cast<size_t>(o.max_tokens));
  }
  EXPECT_EQ(arms[4].mode, SpecMode::kMtp);  // auto resolves to the MTP head
}

TEST(GreedyExactnessStop, StopTokenInsideABlockDiscardsTheRest) {
  const model::Model& m = TinyModel("qwen35");
  const std::vector<int32_t> prompt = test::Prompt(0);
  const std::vector<int32_t> base = Baseline(m, prompt, NumTokens());
  // Stop on the token at index 5 of the baseline (its first occurrence).
  const int32_t stop = base[5];
  size_t first = 0;
  while (base[first] != stop) ++first;
  for (int cap : {2, 4}) {
    test::OracleDrafter oracle(base, 3);
    auto state = m.NewState();
    sampling::Sampler sampler(Greedy(), m.n_vocab());
    sampling::TokenHistory history(prompt);
    const PrefillOutput pre = Prefill(m, *state, prompt, false, Pool());
    DecodeOptions o;
    o.max_tokens = NumTokens();
    o.cap = cap;
    o.stop_tokens = {stop};
    const DecodeOutput out = DecodeSpeculative(m, *state, pre.last_logits, {}, sampler, history, oracle, o, Pool());
    EXPECT_EQ(out.finish, FinishReason::kStop);
    EXPECT_EQ(Ids(out), std::vector<int32_t>(base.begin(), base.begin() + first + 1));
    EXPECT_EQ(history.generated_size(), first + 1);
    EXPECT_EQ(state->n_tokens(), static_cast<int64_t>(prompt.size() + first));
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, GreedyExactness, ::testing::Values("llama", "qwen3", "qwen35"));

}  // namespace
}  // namespace cairn::spec
