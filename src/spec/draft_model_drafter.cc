#include "spec/draft_model_drafter.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/timer.h"
#include "kernels/quant.h"

namespace cairn::spec {

namespace {

int64_t ResolveHeadVocab(int64_t option, int64_t n_vocab) {
  int64_t v = option;
  if (v < 0) v = n_vocab >= 100000 ? DraftModelOptions::kAutoHeadVocab : 0;
  if (v == 0) return n_vocab;
  return std::min(n_vocab, (v + 15) / 16 * 16);
}

}  // namespace

std::optional<DType> DraftNarrowType(std::string_view option) {
  if (option == "auto") return DType::kQ4_0;
  if (option == "none") return std::nullopt;
  const std::optional<DType> type = ParseDType(option);
  if (!type || !kernels::IsSupportedWeightType(*type)) {
    Fail("--draft-quant '{}': expected auto, none or a weight type (q4_0, iq4_nl, q5_0, q8_0, ...)", option);
  }
  return type;
}

DraftModelDrafter::DraftModelDrafter(const model::Model& draft, int32_t target_vocab, ThreadPool& pool,
                                     const DraftSampling& sampling, const DraftModelOptions& options)
    : draft_(draft),
      pool_(pool),
      state_(draft.NewState()),
      picker_(sampling, draft.n_vocab()),
      head_vocab_(ResolveHeadVocab(options.head_vocab, draft.n_vocab())),
      stop_margin_(options.stop_margin < 0 ? DraftModelOptions::kAutoStopMargin : options.stop_margin),
      greedy_(sampling.params.greedy()) {
  if (draft.n_vocab() != target_vocab) {
    Fail("draft model vocabulary ({}) differs from the target's ({})", draft.n_vocab(), target_vocab);
  }
}

void DraftModelDrafter::RewindHybridToBase() {
  std::memcpy(state_->recurrent(), recurrent_save_.data(), state_->recurrent_floats() * sizeof(float));
  state_->RewindKv(base_);
}

void DraftModelDrafter::Begin(std::span<const int32_t> fed, std::span<const float>, int32_t pending) {
  // Drop the speculative rows a previous request may have left (it can end
  // inside a round, after Propose and before Accept).
  if (fed_speculative_ > 0) {
    if (draft_.config().is_hybrid()) {
      RewindHybridToBase();
    } else {
      state_->Truncate(base_);
    }
  }
  proposed_.clear();
  fed_speculative_ = 0;
  // Keep the longest prefix of what the draft state already holds (the draft
  // model's own prefix cache: one sequence, reused across requests, so an
  // agent's next turn feeds only its new tokens). Hybrid drafts can only keep
  // a state that the new request extends as a whole.
  size_t keep = 0;
  const size_t limit = std::min(state_tokens_.size(), fed.size());
  while (keep < limit && state_tokens_[keep] == fed[keep]) ++keep;
  if (keep < state_tokens_.size()) {
    if (keep == 0 || !state_->Truncate(static_cast<int64_t>(keep))) {
      state_->Reset();
      keep = 0;
    }
    state_tokens_.resize(keep);
  }
  base_ = static_cast<int64_t>(keep);
  reused_tokens_ = static_cast<int64_t>(keep);
  backlog_.assign(fed.begin() + static_cast<std::ptrdiff_t>(keep), fed.end());
  backlog_.push_back(pending);
}

void DraftModelDrafter::Propose(int max_k, std::vector<sampling::DraftToken>* drafts) {
  drafts->clear();
  proposed_.clear();
  fed_speculative_ = 0;
  if (max_k <= 0) return;
  Stopwatch watch;
  picker_.NewProposal();
  // Committed backlog in one pass; its last row scores the token after pending.
  model::ForwardRequest req;
  req.tokens = backlog_;
  req.logits_vocab = head_vocab_ < draft_.n_vocab() ? head_vocab_ : 0;
  draft_.Forward(*state_, req, &result_, pool_);
  base_ += static_cast<int64_t>(backlog_.size());
  state_tokens_.insert(state_tokens_.end(), backlog_.begin(), backlog_.end());
  backlog_.clear();
  if (draft_.config().is_hybrid()) {
    recurrent_save_.Resize(state_->recurrent_floats());
    std::memcpy(recurrent_save_.data(), state_->recurrent(), state_->recurrent_floats() * sizeof(float));
  }
  const int64_t V = draft_.n_vocab();
  for (int i = 0; i < max_k; ++i) {
    if (i > 0) {
      // Speculative row: feed the previous draft.
      const int32_t prev = proposed_.back();
      req.tokens = std::span<const int32_t>(&prev, 1);
      draft_.Forward(*state_, req, &result_, pool_);
      ++fed_speculative_;
    }
    float* logits = result_.logits.data();
    if (!greedy_ && head_vocab_ < V) {
      // Sampled drafts: ids past the head have q = 0 (any q keeps the accept test exact).
      std::fill(logits + head_vocab_, logits + V, -std::numeric_limits<float>::infinity());
    }
    const sampling::DraftToken d =
        picker_.Pick(std::span<const float>(logits, static_cast<size_t>(greedy_ ? head_vocab_ : V)));
    drafts->push_back(d);
    proposed_.push_back(d.token);
    if (greedy_ && picker_.last_margin() < stop_margin_) break;  // unsure: later drafts would likely be wasted
  }
  draft_seconds_ += watch.Seconds();
}

void DraftModelDrafter::Accept(std::span<const int32_t> newly_fed, std::span<const float>, int32_t next_pending) {
  if (newly_fed.empty()) Fail("DraftModelDrafter::Accept: no fed tokens");
  const int64_t accepted = static_cast<int64_t>(newly_fed.size()) - 1;
  if (accepted > static_cast<int64_t>(proposed_.size())) Fail("DraftModelDrafter::Accept: more accepted than proposed");
  if (proposed_.empty()) {
    // No proposal this round: only the pending token was verified.
    if (accepted != 0) Fail("DraftModelDrafter::Accept: drafts accepted without a proposal");
    backlog_.push_back(next_pending);
    return;
  }
  // The state holds base_ committed tokens (through the old pending) plus
  // fed_speculative_ draft rows d_1..d_{fed_speculative_}.
  if (!draft_.config().is_hybrid()) {
    const int64_t keep = std::min(accepted, fed_speculative_);
    state_->Truncate(base_ + keep);
    base_ += keep;
    state_tokens_.insert(state_tokens_.end(), proposed_.begin(), proposed_.begin() + keep);
    for (int64_t i = keep; i < accepted; ++i) backlog_.push_back(proposed_[static_cast<size_t>(i)]);
  } else {
    if (fed_speculative_ > 0) RewindHybridToBase();
    for (int64_t i = 0; i < accepted; ++i) backlog_.push_back(proposed_[static_cast<size_t>(i)]);
  }
  backlog_.push_back(next_pending);
  proposed_.clear();
  fed_speculative_ = 0;
}

}  // namespace cairn::spec
