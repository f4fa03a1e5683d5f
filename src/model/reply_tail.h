// Reply-tail checkpoints (docs/prefix-cache.md, "Reply tails").
//
// An agent client sends the model's reply back as part of its next prompt,
// re-rendered by the chat template. The re-rendering usually matches the
// generated tokens until a few tokens before the end (whitespace the template
// trims, the end-of-turn markup). A hybrid model's recurrent state cannot be
// rewound, so without help the next request resumes at the prompt boundary
// before the reply. A ReplyTail, fed by the decoder, keeps what rebuilds the
// state at any of the reply's last `reach` positions without a forward pass:
//   - two full recurrent states, at positions a <= b (both at the prompt end
//     at first);
//   - the recurrence inputs of every token committed since a (VerifyCapture
//     rows: raw conv inputs, q|k|v, g|beta), ~(2 conv_dim + 2 n_v) floats per
//     recurrent layer per token.
// Once `reach` tokens have been committed past b, a takes b's place and b
// becomes a copy of the live state: one state copy per `reach` tokens, and
// [a, now] always covers the last `reach` positions (or the whole reply).
//
// Snapshot() hands the prefix cache the state at a plus the log of (a, now]
// (core/kv_block.h RecurrentSnapshot::replay_*); Model::RestorePrefix
// replays its first k tokens to restore position a + k, bit-identical to a
// forward pass (ReplayRecurrence).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/kv_block.h"
#include "model/config.h"
#include "model/state.h"
#include "model/verify_capture.h"

namespace cairn::model {

class ReplyTail {
 public:
  // reach >= 1: positions before the live one that stay restorable.
  ReplyTail(const ModelConfig& config, int64_t reach);

  // Starts at the state's current position (the end of the prompt).
  void Begin(const SequenceState& state);
  // The last pass fed `tokens` (all committed; the state now ends right after
  // them) and `capture` holds their inputs in its first tokens.size() rows.
  void Commit(const SequenceState& state, const VerifyCapture& capture, std::span<const int32_t> tokens);

  int64_t base_position() const { return a_position_; }
  int64_t logged_tokens() const { return static_cast<int64_t>(tokens_.size()); }
  // The state at a with the log of (a, now]; null when nothing was committed.
  RecurrentSnapshotRef Snapshot() const;

  // Bytes of one logged token (all recurrent layers).
  static size_t TokenBytes(const ModelConfig& config);

 private:
  struct LayerLog {
    std::vector<float> conv_inputs;  // [tokens][conv_dim]
    std::vector<float> qkv;          // [tokens][conv_dim]
    std::vector<float> gates;        // [tokens][2 * n_v_heads]
  };
  const ModelConfig* config_;
  int64_t reach_;
  int64_t a_position_ = 0;
  int64_t b_position_ = 0;
  AlignedBuffer<float> a_state_;
  AlignedBuffer<float> b_state_;
  bool a_is_b_ = true;           // a's state is b's (no copy made yet)
  std::vector<int32_t> tokens_;  // ids of the logged tokens, from a
  std::vector<LayerLog> layers_;
};

// Layout of a replay log with `count` tokens (RecurrentSnapshot::replay_data()):
// per recurrent layer, in order: conv inputs [count][conv_dim], q|k|v
// [count][conv_dim], g|beta [count][2 * n_v_heads], all F32.
std::vector<RecurrenceRows> ReplayLogRows(const ModelConfig& config, const uint8_t* data, int64_t count);

}  // namespace cairn::model
