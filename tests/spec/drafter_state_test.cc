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
