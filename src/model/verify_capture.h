// What a speculative verification pass keeps so it can be rolled back to any
// accepted prefix exactly, without re-reading weights (hybrid-architectures.md §3.7).
//
// Attention KV needs nothing: rolling back is moving n_tokens back (entries
// beyond are overwritten by later writes). The recurrent state cannot be
// rewound, so the pass keeps the state it started from plus, per recurrent
// layer and token, the recurrence inputs; a rollback to `accepted` tokens
// restores the start state and replays the recurrence for those tokens only —
// the same kernel on the same inputs, hence bit-identical to a pass over just
// the accepted tokens.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"
#include "model/state.h"

namespace cairn::model {

struct VerifyCapture {
  int64_t start_tokens = 0;       // state length before the pass
  int64_t n_tokens = 0;           // tokens in the pass
  // False: Begin skips the state copy (a plain decode step recorded for a
  // reply tail, which is never rolled back).
  bool keep_start_state = true;
  AlignedBuffer<float> recurrent_before;  // copy of SequenceState::recurrent() at start
  // Per recurrent layer r:
  std::vector<AlignedBuffer<float>> conv_inputs;  // [n][conv_dim] raw (pre-conv) inputs
  std::vector<AlignedBuffer<float>> qkv;          // [n][conv_dim] q|k|v after conv, SiLU, L2 norm
  std::vector<AlignedBuffer<float>> gates;        // [n][2 * n_v_heads]: g (log decay) then beta

  // Called by Model::Forward at the start of a verification pass.
  void Begin(SequenceState& state, int64_t n);
};

// One recurrent layer's recurrence inputs for `count` consecutive tokens, each
// [count][row] with rows as in VerifyCapture (conv_dim, conv_dim, 2 * n_v_heads).
struct RecurrenceRows {
  const float* conv_inputs = nullptr;
  const float* qkv = nullptr;
  const float* gates = nullptr;
};

// Advances every recurrent layer of `state` over `count` tokens from their
// saved inputs: conv windows shift in the raw inputs, the delta rule runs the
// same kernel on the same q/k/v/g/beta as the forward pass did, so the result
// is bit-identical to the forward pass over those tokens. KV is not touched.
void ReplayRecurrence(const ModelConfig& config, SequenceState& state, std::span<const RecurrenceRows> layers,
                      int64_t count, ThreadPool& pool);

}  // namespace cairn::model
