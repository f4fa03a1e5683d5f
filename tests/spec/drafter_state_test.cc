// After rounds with partial accepts, a model-based drafter's next proposal
// equals that of a fresh drafter given the same committed history (its own
// state was rolled back exactly), for dense and hybrid draft models and MTP.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

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

// Every proposal k drafts long (no early stop at unsure drafts: the random
// tiny models are unsure everywhere), so every rollback length occurs.
DraftModelOptions FullDrafts() {
  DraftModelOptions options;
  options.stop_margin = 0.0f;
  return options;
}

// Feeds tokens to the target (a verify-sized pass) and returns their hidden rows.
std::vector<float> FeedTarget(const model::Model& target, model::SequenceState& state,
                              const std::vector<int32_t>& tokens) {
  model::ForwardRequest req;
  req.tokens = tokens;
  req.all_logits = true;
  req.want_hidden = true;
  model::ForwardResult r;
  target.Forward(state, req, &r, Pool());
  return std::vector<float>(r.hidden.data(), r.hidden.data() + tokens.size() * target.config().n_embd);
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
    const std::vector<float> hidden = FeedTarget(target, *target_state, newly_fed);
    drafter->Accept(newly_fed, drafter->wants_target_hidden() ? hidden : std::span<const float>(), bonus);
    fed.insert(fed.end(), newly_fed.begin(), newly_fed.end());
    fed_hidden.insert(fed_hidden.end(), hidden.begin(), hidden.end());
    pending = bonus;
  }
}

TEST(DrafterState, DenseDraftModelRollsBackExactly) {
  const model::Model& target = TinyModel("qwen35");
  const model::Model& draft = TinyModel("qwen3", 2);
  CheckConsistency(target, [&] { return std::make_unique<DraftModelDrafter>(draft, target.n_vocab(), Pool(), DraftSampling{}, FullDrafts()); });
}

// The draft model's state outlives a request: the next Begin keeps the
// longest common prefix (a dense draft truncates to it, a hybrid one keeps it
// only when the new history extends it) and must then propose exactly what a
// fresh drafter would, including after a request that ended mid-round
// (Propose without Accept).
void CheckReuseAcrossRequests(const std::string& draft_arch) {
  const model::Model& target = TinyModel("qwen3");
  const model::Model& draft = TinyModel(draft_arch, 2);
  DraftModelDrafter reused(draft, target.n_vocab(), Pool(), DraftSampling{}, FullDrafts());
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
    DraftModelDrafter fresh(draft, target.n_vocab(), Pool(), DraftSampling{}, FullDrafts());
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
  CheckConsistency(target, [&] { return std::make_unique<DraftModelDrafter>(draft, target.n_vocab(), Pool(), DraftSampling{}, FullDrafts()); });
}

TEST(DrafterState, MtpRefillsAcceptedPositionsFromTargetHidden) {
  const model::Model& target = TinyModel("qwen35", 3, /*mtp=*/true);
  CheckConsistency(target, [&] { return std::make_unique<MtpDrafter>(target, Pool()); });
}

// The KV rows [0, n_tokens) of two single-sequence states are byte-identical.
bool SameKvRows(const model::SequenceState& a, const model::SequenceState& b) {
  if (a.n_tokens() != b.n_tokens()) return false;
  const KvLayout& layout = a.kv_layout();
  const size_t row_bytes = static_cast<size_t>(layout.head_dim) * layout.ElemBytes();
  const size_t head_bytes = static_cast<size_t>(layout.block_tokens) * row_bytes;  // head-major slabs
  for (int64_t t0 = 0; t0 < a.n_tokens(); t0 += layout.block_tokens) {
    const size_t block = static_cast<size_t>(t0 / layout.block_tokens);
    const size_t rows = static_cast<size_t>(std::min<int64_t>(layout.block_tokens, a.n_tokens() - t0));
    for (int layer = 0; layer < layout.n_attn_layers; ++layer) {
      for (int kv = 0; kv < 2; ++kv) {
        for (int h = 0; h < layout.n_kv_heads; ++h) {
          if (std::memcmp(a.blocks()[block]->Slab(layer, kv) + h * head_bytes,
                          b.blocks()[block]->Slab(layer, kv) + h * head_bytes, rows * row_bytes) != 0) {
            return false;
          }
        }
      }
    }
  }
  return true;
}

// The MTP head's rows outlive a request. A next request that only has target
// hidden rows from a cache-hit position r on keeps the rows [0, r) it built
// (in its KV or still queued) when their tokens agree, and then proposes
// exactly what a fresh drafter given every hidden row of the history would.
TEST(DrafterState, MtpReusesItsRowsAfterACacheHit) {
  const model::Model& target = TinyModel("qwen35", 3, /*mtp=*/true);
  const int64_t E = target.config().n_embd;
  const std::vector<int32_t> prompt = test::Prompt(5, 24);
  auto hidden_of = [&](const std::vector<int32_t>& tokens) {
    auto st = target.NewState();
    return Prefill(target, *st, tokens, true, Pool()).hidden;
  };
  std::vector<sampling::DraftToken> drafts, fresh_drafts;
  // Request 1: a round accepting one draft; `reused` then proposes again
  // (never accepted: its rows are all in its KV), `queued` stops right after
  // the accept (its last two rows are still queued, not in its KV).
  MtpDrafter reused(target, Pool());
  MtpDrafter queued(target, Pool());
  int32_t accepted = 0;
  for (MtpDrafter* d : {&reused, &queued}) {
    auto st = target.NewState();
    const PrefillOutput pre = Prefill(target, *st, prompt, true, Pool());
    d->Begin(prompt, pre.hidden, 500);
    d->Propose(3, &drafts);
    accepted = drafts[0].token;
    const std::vector<int32_t> newly_fed = {500, accepted};
    d->Accept(newly_fed, FeedTarget(target, *st, newly_fed), 600);
    if (d == &reused) d->Propose(3, &drafts);
  }
  // Next requests: request 1's history (+ its pending 600) extended, and a
  // branch at token 10.
  std::vector<int32_t> extended = prompt;
  extended.insert(extended.end(), {500, accepted, 600, 11, 12, 13, 14});
  std::vector<int32_t> branched(prompt.begin(), prompt.begin() + 10);
  branched.insert(branched.end(), {21, 22, 23, 24, 25, 26});
  struct Case {
    const std::vector<int32_t>* history;
    int64_t hit;           // first position with a target hidden row
    int64_t expect_kept;   // rows the drafter should keep
  };
  const int64_t built = static_cast<int64_t>(prompt.size()) + 2;  // rows request 1 built (KV or queued)
  for (const Case& c : {Case{&extended, built, built}, Case{&extended, 10, 10}, Case{&extended, 25, 25},
                        Case{&branched, 8, 8}, Case{&branched, 12, 12}, Case{&extended, 12, 0}}) {
    const std::vector<int32_t>& h = *c.history;
    const std::vector<float> all = hidden_of(h);
    reused.Begin(h, std::span<const float>(all).subspan(static_cast<size_t>(c.hit * E)), 700);
    EXPECT_EQ(reused.reused_rows(), c.expect_kept) << "hit at " << c.hit;
    reused.Propose(3, &drafts);
    if (c.expect_kept == c.hit) {
      MtpDrafter fresh(target, Pool());
      fresh.Begin(h, all, 700);
      fresh.Propose(3, &fresh_drafts);
      EXPECT_EQ(Tokens(drafts), Tokens(fresh_drafts)) << "hit at " << c.hit;
      EXPECT_TRUE(SameKvRows(reused.state(), fresh.state())) << "hit at " << c.hit;
    } else {
      // Started over from row `hit` at position 0: fewer rows than a fresh drafter.
      EXPECT_EQ(reused.state().n_tokens(), static_cast<int64_t>(h.size()) - c.hit + 2);
    }
  }
  // Rows still queued when request 1 ended are kept too (hit at 25: the first
  // of the two queued rows).
  {
    const std::vector<float> all = hidden_of(extended);
    queued.Begin(extended, std::span<const float>(all).subspan(static_cast<size_t>(25 * E)), 700);
    EXPECT_EQ(queued.reused_rows(), 25);
    queued.Propose(3, &drafts);
    MtpDrafter fresh(target, Pool());
    fresh.Begin(extended, all, 700);
    fresh.Propose(3, &fresh_drafts);
    EXPECT_EQ(Tokens(drafts), Tokens(fresh_drafts));
    EXPECT_TRUE(SameKvRows(queued.state(), fresh.state()));
  }
  // Seeded sampling turns reuse off: the rows given are all the drafter uses.
  reused.set_reuse_state(false);
  const std::vector<float> all = hidden_of(extended);
  reused.Begin(extended, std::span<const float>(all).subspan(static_cast<size_t>(10 * E)), 700);
  EXPECT_EQ(reused.reused_rows(), 0);
}

TEST(DrafterState, LookupIndexEqualsFreshIndex) {
  const model::Model& target = TinyModel("qwen3");
  CheckConsistency(target, [&] { return std::make_unique<LookupDrafter>(LookupOptions{1, 4, 0, 8}); });
}

}  // namespace
}  // namespace cairn::spec
