#include "spec/mtp_drafter.h"

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

void MtpDrafter::Begin(std::span<const int32_t> fed, std::span<const float> fed_hidden, int32_t pending) {
  state_->Reset();
  base_ = 0;
  proposed_ = false;
  backlog_hidden_.clear();
  backlog_tokens_.clear();
  // Row i pairs h_i with the token after it: fed[i + 1], and pending for the last.
  std::vector<int32_t> next(fed.begin(), fed.end());
  if (!next.empty()) {
    next.erase(next.begin());
    next.push_back(pending);
  }
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
  // Drop the chained (speculative) rows; the target rows stay.
  if (proposed_) state_->RewindKv(base_);
  proposed_ = false;
  std::vector<int32_t> next(newly_fed.begin() + 1, newly_fed.end());
  next.push_back(next_pending);
  QueueRows(newly_fed_hidden, next);
}

}  // namespace cairn::spec
