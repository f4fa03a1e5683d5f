#include "spec/mtp_drafter.h"

#include <algorithm>

#include "core/error.h"

namespace cairn::spec {

MtpDrafter::MtpDrafter(const model::Model& target, ThreadPool& pool, const DraftSampling& sampling)
    : head_(target), pool_(pool), n_embd_(target.config().n_embd), state_(head_.NewState()),
      picker_(sampling, target.n_vocab()) {}

void MtpDrafter::QueueRows(std::span<const float> hidden, std::span<const int32_t> next_tokens) {
  if (static_cast<int64_t>(hidden.size()) != static_cast<int64_t>(next_tokens.size()) * n_embd_) {
    Fail("MtpDrafter: {} hidden floats for {} rows (the target pass must set want_hidden)", hidden.size(),
         next_tokens.size());
  }
  backlog_hidden_.insert(backlog_hidden_.end(), hidden.begin(), hidden.end());
  backlog_tokens_.insert(backlog_tokens_.end(), next_tokens.begin(), next_tokens.end());
}

void MtpDrafter::DropChainedRows() {
  // Chained (speculative) rows follow base_; the target-built rows stay.
  if (proposed_) state_->RewindKv(base_);
  proposed_ = false;
}

void MtpDrafter::Begin(std::span<const int32_t> fed, std::span<const float> fed_hidden, int32_t pending) {
  if (fed_hidden.size() % static_cast<size_t>(n_embd_) != 0 ||
      fed_hidden.size() / static_cast<size_t>(n_embd_) > fed.size()) {
    Fail("MtpDrafter: {} hidden floats for a history of {} tokens", fed_hidden.size(), fed.size());
  }
  const int64_t rows = static_cast<int64_t>(fed_hidden.size()) / n_embd_;
  const int64_t hidden_from = static_cast<int64_t>(fed.size()) - rows;
  DropChainedRows();  // a previous request can end after Propose
  // Rows known: [0, base_) in the KV, [base_, base_ + backlog) queued.
  const int64_t known = base_ + static_cast<int64_t>(backlog_tokens_.size());
  int64_t keep = 0;
  if (reuse_state_ && hidden_from > 0 && known >= hidden_from) {
    size_t lcp = 0;
    const size_t limit = std::min(history_.size(), fed.size());
    while (lcp < limit && history_[lcp] == fed[lcp]) ++lcp;
    if (static_cast<int64_t>(lcp) >= hidden_from + 1) keep = hidden_from;
  }
  if (keep > base_) {
    // Keep the KV and the first keep - base_ queued rows.
    const size_t queued = static_cast<size_t>(keep - base_);
    backlog_tokens_.resize(queued);
    backlog_hidden_.resize(queued * static_cast<size_t>(n_embd_));
  } else {
    backlog_tokens_.clear();
    backlog_hidden_.clear();
    if (keep > 0) {
      state_->RewindKv(keep);
    } else {
      state_->Reset();
    }
    base_ = keep;
  }
  reused_rows_ = keep;
  history_.assign(fed.begin(), fed.end());
  history_.push_back(pending);
  // Row i pairs h_i with the token after it: fed[i + 1], and pending for the last.
  std::vector<int32_t> next(fed.begin() + hidden_from + (rows > 0 ? 1 : 0), fed.end());
  if (rows > 0) next.push_back(pending);
  QueueRows(fed_hidden, next);
}

void MtpDrafter::Propose(int max_k, std::vector<sampling::DraftToken>* drafts) {
  drafts->clear();
  proposed_ = false;
  if (max_k <= 0 || backlog_tokens_.empty()) return;
  picker_.NewProposal();
  head_.Forward(*state_, backlog_hidden_, backlog_tokens_, /*all_logits=*/false, &result_, pool_);
  base_ = state_->n_tokens();
  backlog_hidden_.clear();
  backlog_tokens_.clear();
  proposed_ = true;
  const int64_t V = head_.config().n_vocab;
  for (int s = 0; s < max_k; ++s) {
    if (s > 0) {
      // Chained row: h = previous g, token = previous draft.
      chain_hidden_.assign(result_.hidden.data(), result_.hidden.data() + n_embd_);
      const int32_t prev = drafts->back().token;
      head_.Forward(*state_, chain_hidden_, std::span<const int32_t>(&prev, 1), false, &result_, pool_);
    }
    drafts->push_back(picker_.Pick(std::span<const float>(result_.logits.data(), V)));
  }
}

void MtpDrafter::Accept(std::span<const int32_t> newly_fed, std::span<const float> newly_fed_hidden,
                        int32_t next_pending) {
  if (newly_fed.empty()) Fail("MtpDrafter::Accept: no fed tokens");
  DropChainedRows();
  std::vector<int32_t> next(newly_fed.begin() + 1, newly_fed.end());
  next.push_back(next_pending);
  QueueRows(newly_fed_hidden, next);
  history_.insert(history_.end(), newly_fed.begin() + 1, newly_fed.end());
  history_.push_back(next_pending);
}

}  // namespace cairn::spec
