// Drafting with the target's own MTP head (model/mtp.h): d_1 comes from the
// target hidden h_{N-1} and the pending token x_N; d_s (s >= 2) chains the
// head's own normed output and d_{s-1}.
//
// MTP KV bookkeeping (positions are target positions). Between rounds the
// MTP state holds rows 0..M-1, every one built from a *target* hidden state;
// backlog_ holds the target rows still to add, (h_i, x_{i+1}) for
// i = M..N-1, whose last is (h_{N-1}, x_N) — the first draft row. Propose
// feeds the backlog in one pass (its last row's logits give d_1; after it
// M = N) and then the chained rows at positions N..N+k-2, which are
// speculative. Accept([x_N, d_1..d_j], target rows h_N..h_{N+j}, b) rewinds
// the MTP KV to M = N (dropping every chained row) and queues the verified
// rows (h_{N+i}, d_{i+1}) for i < j and (h_{N+j}, b): the accepted positions
// are re-filled from the target's verified hidden states, so the MTP state
// equals that of a fresh drafter given the committed history.
//
// ACROSS REQUESTS (the MTP head's own prefix cache). Begin gets the whole
// history but target hidden rows only from hidden_from = fed.size() - rows on
// (a prefix-cache hit skips the cached rows). The rows the drafter already
// holds — in its KV (0..M-1) or still in its backlog — stay valid for the new
// history as far as their tokens agree: row i = (h_i, x_{i+1}) needs tokens
// 0..i+1 equal. When they cover [0, hidden_from), the new rows continue them,
// so the head attends over the whole conversation exactly as after a cold
// prefill; otherwise the state starts over from the rows given.
#pragma once

#include <memory>

#include "core/thread_pool.h"
#include "model/model.h"
#include "model/mtp.h"
#include "spec/drafter.h"
#include "spec/model_draft_picker.h"

namespace cairn::spec {

class MtpDrafter : public Drafter {
 public:
  // `target` (with has_mtp()) and `pool` must outlive the drafter.
  MtpDrafter(const model::Model& target, ThreadPool& pool, const DraftSampling& sampling = {});

  std::string name() const override { return "mtp"; }
  bool wants_target_hidden() const override { return true; }
  void Begin(std::span<const int32_t> fed, std::span<const float> fed_hidden, int32_t pending) override;
  void Propose(int max_k, std::vector<sampling::DraftToken>* drafts) override;
  void Accept(std::span<const int32_t> newly_fed, std::span<const float> newly_fed_hidden,
              int32_t next_pending) override;

  const model::SequenceState& state() const { return *state_; }
  // Rows kept from the previous request by the last Begin.
  int64_t reused_rows() const { return reused_rows_; }
  // Off for seeded sampling: drafts (and so random-number use) must not
  // depend on what an earlier request left behind.
  void set_reuse_state(bool reuse) { reuse_state_ = reuse; }

 private:
  void QueueRows(std::span<const float> hidden, std::span<const int32_t> next_tokens);
  void DropChainedRows();

  model::MtpHead head_;
  ThreadPool& pool_;
  int64_t n_embd_;
  std::unique_ptr<model::SequenceState> state_;
  ModelDraftPicker picker_;
  std::vector<float> backlog_hidden_;   // [rows][n_embd]
  std::vector<int32_t> backlog_tokens_; // [rows]
  int64_t base_ = 0;                    // target-built rows in state_
  bool proposed_ = false;
  model::MtpResult result_;
  std::vector<float> chain_hidden_;
  std::vector<int32_t> history_;        // x_0 .. x_N: committed tokens + pending
  bool reuse_state_ = true;
  int64_t reused_rows_ = 0;
};

}  // namespace cairn::spec
