// After rounds with partial accepts, a model-based drafter's next proposal
// equals that of a fresh drafter given the same committed history (its own
// state was rolled back exactly), for dense and hybrid draft models and MTP.
#include <gtest/gtest.h>

#include "sampling/rng.h"
#include "spec/draft_model_drafter.h"
#include "spec/lookup_drafter.h"
#include "spec/mtp_drafter.h"
#include "spec/speculative_decoder.h"
#include "spec_test_util.h"

namespace cairn::spec {
namespace {

using test::Pool;
using test::TinyModel;

std::vector<int32_t> Tokens(const std::vector<sampling::DraftToken>& drafts) {
  std::vector<int32_t> ids;
  for (const auto& d : drafts) ids.push_back(d.token);
  return ids;
}

// Drives `make()` drafters through rounds with random accept lengths. The
// target (for hidden rows) is fed the committed tokens as a real decode would.
template <typename Make>
void CheckConsistency(const model::Model& target, Make make) {
  const int rounds = test::Sanitized() ? 3 : 8;
  const int k = 3;
  const std::vector<int32_t> prompt = test::Prompt(3, 16);
  auto target_state = target.NewState();
  const PrefillOutput pre = Prefill(target, *target_state, prompt, true, Pool());
  std::vector<int32_t> fed = prompt;
  std::vector<float> fed_hidden = pre.hidden;
  int32_t pending = 777;
  auto drafter = make();
  drafter->Begin(fed, fed_hidden, pending);
  sampling::Rng rng(5, 2);
  const int64_t E = target.config().n_embd;
  for (int round = 0; round < rounds; ++round) {
    std::vector<sampling::DraftToken> drafts;
    drafter->Propose(k, &drafts);
    ASSERT_LE(static_cast<int>(drafts.size()), k);
    if (drafter->name() != "lookup") {
      ASSERT_EQ(static_cast<int>(drafts.size()), k);
    }
    // A fresh drafter on the same committed history must propose the same.
    auto fresh = make();
    fresh->Begin(fed, fed_hidden, pending);
    std::vector<sampling::DraftToken> fresh_drafts;
    fresh->Propose(k, &fresh_drafts);
    EXPECT_EQ(Tokens(drafts), Tokens(fresh_drafts)) << "round " << round;

    // Accept j of them (every length occurs), then a made-up bonus token.
    const int j = static_cast<int>(rng.NextU64() % (drafts.size() + 1));
    std::vector<int32_t> newly_fed = {pending};
    for (int i = 0; i < j; ++i) newly_fed.push_back(drafts[i].token);
    const int32_t bonus = static_cast<int32_t>(rng.NextU64() % 20000) + 100;
    model::ForwardRequest req;
    req.tokens = newly_fed;
    req.all_logits = true;
    req.want_hidden = true;
    model::ForwardResult r;
    target.Forward(*target_state, req, &r, Pool());
    const std::span<const float> hidden(r.hidden.data(), newly_fed.size() * E);
    drafter->Accept(newly_fed, drafter->wants_target_hidden() ? hidden : std::span<const float>(), bonus);
    fed.insert(fed.end(), newly_fed.begin(), newly_fed.end());
    fed_hidden.insert(fed_hidden.end(), hidden.begin(), hidden.end());
    pending = bonus;
  }
}

TEST(DrafterState, DenseDraftModelRollsBackExactly) {
  const model::Model& target = TinyModel("qwen35");
  const model::Model& draft = TinyModel("qwen3", 2);
  CheckConsistency(target, [&] { return std::make_unique<DraftModelDrafter>(draft, target.n_vocab(), Pool()); });
}

// The draft model's state outlives a request: the next Begin keeps the
// longest common prefix (a dense draft truncates to it, a hybrid one keeps it
// only when the new history extends it) and must then propose exactly what a
// fresh drafter would, including after a request that ended mid-round
// (Propose without Accept).
void CheckReuseAcrossRequests(const std::string& draft_arch) {
  const model::Model& target = TinyModel("qwen3");
  const model::Model& draft = TinyModel(draft_arch, 2);
  DraftModelDrafter reused(draft, target.n_vocab(), Pool());
  const std::vector<int32_t> base = test::Prompt(7, 24);
  std::vector<sampling::DraftToken> drafts, fresh_drafts;
  // Request 1: a round, accept 1, then a proposal the request never accepts.
  reused.Begin(base, {}, 500);
  reused.Propose(3, &drafts);
  const int32_t accepted = drafts[0].token;
  reused.Accept(std::vector<int32_t>{500, accepted}, {}, 600);
  reused.Propose(3, &drafts);
  std::vector<int32_t> turn = base;  // what request 1 committed
  turn.insert(turn.end(), {500, accepted, 600});
  struct Case {
    std::vector<int32_t> history;
    int64_t expect_reused_at_least;
  };
  std::vector<int32_t> extended = turn;  // next turn: extends what was fed
  extended.insert(extended.end(), {11, 12, 13});
  std::vector<int32_t> branched(base.begin(), base.begin() + 10);  // an edit after token 10
  branched.insert(branched.end(), {21, 22, 23, 24});
  const bool dense = !draft.config().is_hybrid();
  for (const Case& c : {Case{extended, 24}, Case{branched, dense ? 10 : 0}, Case{turn, 0}}) {
    reused.Begin(c.history, {}, 700);
    EXPECT_GE(reused.reused_tokens(), c.expect_reused_at_least);
    reused.Propose(3, &drafts);
    DraftModelDrafter fresh(draft, target.n_vocab(), Pool());
    fresh.Begin(c.history, {}, 700);
    fresh.Propose(3, &fresh_drafts);
    EXPECT_EQ(Tokens(drafts), Tokens(fresh_drafts)) << "history of " << c.history.size();
  }
}

TEST(DrafterState, DenseDraftModelReusesItsStateAcrossRequests) { CheckReuseAcrossRequests("qwen3"); }
TEST(DrafterState, HybridDraftModelReusesItsStateAcrossRequests) { CheckReuseAcrossRequests("qwen35"); }

TEST(DrafterState, HybridDraftModelRollsBackExactly) {
  const model::Model& target = TinyModel("qwen3");
  const model::Model& draft = TinyModel("qwen35", 2);
  CheckConsistency(target, [&] { return std::make_unique<DraftModelDrafter>(draft, target.n_vocab(), Pool()); });
}

TEST(DrafterState, MtpRefillsAcceptedPositionsFromTargetHidden) {
  const model::Model& target = TinyModel("qwen35", 3, /*mtp=*/true);
  CheckConsistency(target, [&] { return std::make_unique<MtpDrafter>(target, Pool()); });
}

TEST(DrafterState, LookupIndexEqualsFreshIndex) {
  const model::Model& target = TinyModel("qwen3");
  CheckConsistency(target, [&] { return std::make_unique<LookupDrafter>(LookupOptions{1, 4, 0, 8}); });
}

}  // namespace
}  // namespace cairn::spec
