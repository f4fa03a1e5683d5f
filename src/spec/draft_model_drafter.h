// Drafting with a separate small model that shares the target's vocabulary
// (Leviathan et al.; hybrid-architectures.md §3.2).
//
// The draft model keeps its own SequenceState. Invariant between rounds: the
// state holds a prefix of the committed history (base_ tokens); backlog_
// holds the committed tokens after it, ending with the pending token.
// Propose feeds the backlog in one pass (its last row gives d_1), then feeds
// d_1..d_{k-1} one at a time (speculative rows). Accept rolls the speculative
// rows back:
//   dense draft model:  truncate the KV to base_ + accepted drafts that were fed;
//   hybrid draft model: restore the recurrent state copied before the first
//                       speculative row, rewind the KV to base_, and re-feed
//                       the accepted drafts with the next backlog.
// Both leave exactly the state of a pass over committed tokens only (forward
// passes are chunking-independent), so the next proposal equals a fresh
// drafter's. The state outlives a request: Begin keeps the longest common
// prefix with the new history (truncating a dense draft model), so a
// multi-turn conversation feeds the draft model only its new tokens.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "core/aligned_buffer.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "model/model.h"
#include "spec/drafter.h"
#include "spec/model_draft_picker.h"

namespace cairn::spec {

// How much the draft model computes per draft (neither changes outputs: the
// target verifies every draft, so only speed and acceptance move).
//
// head_vocab: the draft's LM head scores only token ids [0, head_vocab)
//   (rounded up to 16): the head of a 0.5B model with a 151,936-token
//   vocabulary is ~40% of its weights (145 of 392 MB per step in Q8_0). BPE
//   vocabularies number tokens roughly by merge order, i.e. by frequency:
//   on three Python standard-library modules the first 65,536 Qwen2.5 ids
//   cover 98.1-99.1% of the tokens (32,768: 93.5-95.3%). -1 (default):
//   kAutoHeadVocab for vocabularies of 100,000 ids or more, else all; 0: all.
// stop_margin: greedy drafts stop after a draft whose top-1 logit leads the
//   runner-up by less than this (the draft model is unsure, so the next
//   drafts would likely be wasted); the unsure draft is still proposed.
//   Negative (default): kAutoStopMargin; 0: never stop early.
// Measured on the 1.5B/0.5B Qwen2.5-Coder pair (docs/benchmarks.md):
// 0.91x of plain decoding with neither, 1.36x with both.
struct DraftModelOptions {
  static constexpr int64_t kAutoHeadVocab = 65536;
  static constexpr float kAutoStopMargin = 2.0f;
  int64_t head_vocab = -1;
  float stop_margin = -1.0f;
};

// The type a draft model's wider matrices are re-encoded to at load
// (model::Model::LoadOptions::narrow_to), from the --draft-quant option:
//   "auto" (default): q4_0. A draft step reads every weight once, so its cost
//     follows the file's bytes per weight; Q4_K_M files of widths that are
//     not multiples of 256 keep many Q5_0/Q8_0 matrices (the 0.5B Qwen2.5:
//     392 MB per step, 279 MB as q4_0; docs/speculative.md).
//   "none": the file's types;
//   a type name (q4_0, iq4_nl, q5_0, ...): that type.
// Only the draft's acceptance can move: the target verifies every draft.
// Throws cairn::Error for an unknown name.
std::optional<DType> DraftNarrowType(std::string_view option);

class DraftModelDrafter : public Drafter {
 public:
  // `draft` and `pool` must outlive the drafter. Throws cairn::Error when the
  // vocabularies differ in size.
  DraftModelDrafter(const model::Model& draft, int32_t target_vocab, ThreadPool& pool,
                    const DraftSampling& sampling = {}, const DraftModelOptions& options = {});

  // The head vocabulary and stop margin in effect (options resolved).
  int64_t head_vocab() const { return head_vocab_; }
  float stop_margin() const { return stop_margin_; }

  std::string name() const override { return "draft"; }
  void Begin(std::span<const int32_t> fed, std::span<const float> fed_hidden, int32_t pending) override;
  void Propose(int max_k, std::vector<sampling::DraftToken>* drafts) override;
  void Accept(std::span<const int32_t> newly_fed, std::span<const float> newly_fed_hidden,
              int32_t next_pending) override;

  const model::SequenceState& state() const { return *state_; }
  double draft_seconds() const { return draft_seconds_; }  // time spent in Propose
  // Tokens of the last Begin's history that were already in the draft state.
  int64_t reused_tokens() const { return reused_tokens_; }

 private:
  // Hybrid draft: drops the speculative rows (restores the recurrent state
  // saved after the backlog, KV back to base_).
  void RewindHybridToBase();

  const model::Model& draft_;
  ThreadPool& pool_;
  std::unique_ptr<model::SequenceState> state_;
  ModelDraftPicker picker_;
  std::vector<int32_t> backlog_;        // committed, not yet in state_; ends with pending
  int64_t base_ = 0;                    // committed tokens in state_
  std::vector<int32_t> state_tokens_;   // those base_ tokens (kept across requests)
  int64_t reused_tokens_ = 0;
  std::vector<int32_t> proposed_;       // last proposal
  int64_t fed_speculative_ = 0;         // proposal rows fed into state_ (d_1..d_{k-1})
  AlignedBuffer<float> recurrent_save_; // hybrid: recurrent state at base_ (after the backlog)
  model::ForwardResult result_;
  double draft_seconds_ = 0.0;
  int64_t head_vocab_;   // logits scored per draft (<= n_vocab, a multiple of 16 or n_vocab)
  float stop_margin_;    // 0: never stop early
  bool greedy_;
};

}  // namespace cairn::spec
