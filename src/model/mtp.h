// Qwen3.5's MTP (nextn) head: a one-layer drafter that reads the target's
// hidden states (hybrid-architectures.md §1.7).
//
// Row semantics. Let h_i be the target's final-norm hidden state at position
// i (what the output head sees; ForwardRequest.want_hidden) and x_{i+1} the
// token that follows position i. MTP row i computes
//   z_i      = eh_proj · [enorm(emb(x_{i+1})) ; hnorm(h_i)]     (embedding half first)
//   y_i      = decoder_layer(z_i) at position i, attending over MTP rows 0..i
//   g_i      = shared_head_norm(y_i)                             [n_embd]
//   logits_i = output · g_i                                      -> predicts x_{i+2}
// The MTP layer has its own KV cache: a SequenceState built from config(), a
// copy of the target config with one gated-attention layer. MTP row i lives at
// KV position i, so the MTP state must be filled contiguously from 0.
//
// Chaining (draft step s >= 2) feeds g (the output *after* shared_head_norm)
// as the next row's hidden and the previous draft as its token. That is
// vLLM's convention (its MTP proposer feeds the module's normed output back),
// and keeps every hidden input of the head a post-norm vector, like the
// target's h. The golden reference (tests/model/golden, mtp_step2_logits)
// follows the same convention.
//
// Rollback. Chained rows (built from the head's own g, not from the target)
// are speculative: after verification the caller rewinds the MTP state to the
// last row that was built from a *target* hidden state and re-fills the
// accepted positions from the target's verified hidden rows (see
// spec/mtp_drafter.h). Rewinding is SequenceState::RewindKv: the MTP state
// has no recurrent part.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"
#include "model/config.h"
#include "model/model.h"
#include "model/state.h"
#include "model/weights.h"

namespace cairn::model {

struct MtpResult {
  int64_t n_rows = 0;             // logits rows: all rows, or only the last
  AlignedBuffer<float> logits;    // [n_rows][n_vocab]
  AlignedBuffer<float> hidden;    // [n_rows][n_embd] g (after shared_head_norm): the next step's h
};

class MtpHead {
 public:
  // `target` must outlive the head and have has_mtp(); `index` selects the
  // nextn layer (Qwen3.5 ships one).
  explicit MtpHead(const Model& target, int index = 0);

  // One gated-attention layer, otherwise the target's hyper-parameters.
  const ModelConfig& config() const { return config_; }
  std::unique_ptr<SequenceState> NewState(DType kv_dtype = DType::kF16) const {
    return std::make_unique<SequenceState>(config_, kv_dtype);
  }

  // Appends n = tokens.size() rows at positions state.n_tokens() ... + n - 1.
  // hidden: [n][n_embd]; row i is h of position state.n_tokens() + i (target
  // final-norm hidden, or the previous step's g when chaining); tokens[i] is
  // the token after that position. Logits (and g) for every row when
  // all_logits, else only for the last row. n may be 0 (no-op).
  void Forward(SequenceState& state, std::span<const float> hidden, std::span<const int32_t> tokens,
               bool all_logits, MtpResult* result, ThreadPool& pool) const;

 private:
  const Model* target_;
  const MtpWeights* w_;
  ModelConfig config_;
};

}  // namespace cairn::model
