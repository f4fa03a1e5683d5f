// Per-sequence model state: paged attention KV plus, for hybrid models, the
// recurrent (Gated DeltaNet) state of every recurrent layer.
//
// Layout of the recurrent buffer (F32, one allocation so a snapshot is one copy):
//   for each recurrent layer r (in layer order):
//     conv window  [conv_kernel - 1][conv_dim]    raw pre-conv inputs, oldest first
//     ssm state    [n_v_heads][d_k][d_v]           S of the delta rule
// KV lives in blocks (core/kv_block.h); positions [0, n_tokens) are valid.
//
// Sliding-window layers (gemma3 local layers; docs/sliding-window.md) keep
// their KV in a second block table of the same 64-token alignment
// (`swa_blocks`, layout over the sliding layers only). Its blocks are private
// to the sequence (never shared with the prefix cache); a block that falls
// wholly out of every future query's window is freed (null entry), so that
// table holds at most window + chunk + 2 blocks' worth of positions. For the
// prefix cache, the window's KV at position n is a "recurrent" snapshot blob
// (SnapshotRecurrent), checkpointed like Gated DeltaNet state:
//   [slot][block bytes of the sliding layout], slot i = block
//   WindowFirstBlock(n) + i, kSwaSlots() slots (unused ones zero).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/kv_block.h"
#include "model/config.h"

namespace cairn::model {

// Immutable, byte-counted copy of a sequence's state at `n_tokens`. Shares
// frozen KV blocks with the live sequence and the prefix cache.
struct StateSnapshot {
  int64_t n_tokens = 0;
  KvBlockTable blocks;                 // frozen; covers [0, n_tokens)
  RecurrentSnapshotRef recurrent;      // null for dense models
  // Bytes held (blocks + recurrent); shared blocks are counted in full here
  // (the prefix cache counts unique bytes across entries).
  size_t bytes() const;
};

class SequenceState {
 public:
  // kv_dtype: F16 or BF16 elements of V (and of K unless k_q8); k_q8: K rows
  // as Q8_0 (core/kv_block.h's KvQ8Geometry; `--cache-type-k q8_0`).
  explicit SequenceState(const ModelConfig& config, DType kv_dtype = DType::kF16, int block_tokens = 64,
                         bool k_q8 = false);

  const ModelConfig& config() const { return *config_; }
  const KvLayout& kv_layout() const { return kv_layout_; }
  int64_t n_tokens() const { return n_tokens_; }

  // --- KV blocks -----------------------------------------------------------
  const KvBlockTable& blocks() const { return blocks_; }
  // Makes block `index` exist and be writable (copy-on-write if frozen/shared).
  KvBlock& WritableBlock(int64_t index);
  // Ensures capacity for positions [0, n) (allocating writable blocks).
  void ReserveTokens(int64_t n);

  // --- sliding-window KV (gemma3) --------------------------------------------
  const KvLayout& swa_layout() const { return swa_layout_; }
  const KvBlockTable& swa_blocks() const { return swa_blocks_; }   // entries may be null (freed)
  KvBlock& WritableSwaBlock(int64_t index);
  // Frees sliding blocks holding only positions < keep_from.
  void ReleaseSlidingBefore(int64_t keep_from);
  // First block a query at position n (or later) reads on sliding layers.
  int64_t WindowFirstBlock(int64_t n) const;
  int64_t swa_slots() const { return swa_slots_; }
  // The window blob for position p (<= n_tokens, blocks still held).
  RecurrentSnapshotRef SnapshotWindowAt(int64_t p) const;

  // --- recurrent state ------------------------------------------------------
  size_t recurrent_floats() const { return recurrent_.size(); }
  float* recurrent() { return recurrent_.data(); }
  const float* recurrent() const { return recurrent_.data(); }
  size_t conv_floats_per_layer() const { return conv_floats_; }
  size_t ssm_floats_per_layer() const { return ssm_floats_; }
  // Recurrent layer r (0-based among recurrent layers).
  float* ConvState(int r) { return recurrent_.data() + r * (conv_floats_ + ssm_floats_); }
  float* SsmState(int r) { return ConvState(r) + conv_floats_; }

  // --- lifecycle -------------------------------------------------------------
  void Reset();                         // empty sequence, zero recurrent state
  // Called by the forward pass after it wrote KV/state for `count` more tokens.
  void Advance(int64_t count) { n_tokens_ += count; }

  // Truncates to n tokens. Always possible for dense models; for hybrid models
  // only when n == n_tokens() (recurrent state cannot be rewound), for sliding
  // models only while the window of n is still held — returns false
  // otherwise and changes nothing.
  bool Truncate(int64_t n);

  // Extends the sequence to n (>= n_tokens) with cached frozen KV blocks
  // covering [0, n), leaving the recurrent state alone: only for
  // Model::RestorePrefix, which then replays the recurrence up to n.
  void AdoptKv(const KvBlockTable& blocks, int64_t n);

  // Moves the KV length back to n (<= n_tokens) without touching recurrent
  // state: only for callers that restore the recurrent state themselves
  // (speculative rollback).
  void RewindKv(int64_t n);

  // Immutable copy of the current state (freezes the current blocks; the next
  // write to the partial last block copies it).
  StateSnapshot Snapshot();
  RecurrentSnapshotRef SnapshotRecurrent() const;

  // Replaces the state with a snapshot's (copies the recurrent part; shares blocks).
  void Restore(const StateSnapshot& snapshot);
  // Restores a prefix: KV blocks covering [0, n_tokens) (the last may be partial
  // or hold later positions, which are ignored) and the recurrent state at
  // exactly n_tokens (required for hybrid models, ignored for dense).
  void RestorePrefix(const KvBlockTable& blocks, int64_t n_tokens, const RecurrentSnapshotRef& recurrent);

  // Bytes owned by this sequence (KV blocks, live sliding blocks, recurrent state).
  size_t bytes() const;

  // Forward-pass scratch, reused across calls so decode steps do not allocate:
  // buffer `slot` grown to at least `floats` (contents unspecified).
  float* Scratch(int slot, size_t floats) {
    if (scratch_.size() <= static_cast<size_t>(slot)) scratch_.resize(static_cast<size_t>(slot) + 1);
    if (scratch_[slot].size() < floats) scratch_[slot].Resize(floats);
    return scratch_[slot].data();
  }

 private:
  const ModelConfig* config_;
  KvLayout kv_layout_;
  KvBlockTable blocks_;
  int64_t n_tokens_ = 0;
  size_t conv_floats_ = 0;
  size_t ssm_floats_ = 0;
  AlignedBuffer<float> recurrent_;
  KvLayout swa_layout_;
  KvBlockTable swa_blocks_;   // indexed by absolute block; null = freed (out of window)
  int64_t swa_slots_ = 0;
  std::vector<AlignedBuffer<float>> scratch_;
};

}  // namespace cairn::model
