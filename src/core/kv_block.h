// Paged model state shared by the model, the prefix cache and speculation.
//
// Attention KV is stored in fixed-size blocks of `block_tokens` consecutive
// positions, aligned to absolute positions: block i holds positions
// [i * block_tokens, (i + 1) * block_tokens). One block holds those positions
// for every attention layer:
//   bytes = [attn_layer][K=0 | V=1][kv_head][token_in_block][head_dim] of `dtype`.
// A sequence's KV is a block table (vector of shared_ptr<KvBlock>). Blocks held
// by the prefix cache are frozen (immutable); a sequence that must write into a
// frozen block first copies it (copy-on-write), so restoring a cached prefix is
// a pointer copy, never a bulk copy, and cached entries can never be corrupted.
//
// Recurrent (Gated DeltaNet) layers cannot be truncated, so their state is saved
// whole at chosen positions: a RecurrentSnapshot holds, for every recurrent
// layer, the conv window and the F32 recurrent state at exactly `position`.
// Its byte layout is the model's business; to the cache it is a sized blob.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/dtype.h"

namespace cairn {

// Geometry of a model's KV blocks (fixed per model).
struct KvLayout {
  int n_attn_layers = 0;   // layers with attention KV (all layers for dense models)
  int n_kv_heads = 0;
  int head_dim = 0;
  DType dtype = DType::kF16;   // kF16 or kBF16
  int block_tokens = 64;

  size_t ElemBytes() const { return 2; }
  // Bytes of one K (or V) slab: one layer, one block.
  size_t SlabBytes() const {
    return static_cast<size_t>(block_tokens) * n_kv_heads * head_dim * ElemBytes();
  }
  size_t BlockBytes() const { return SlabBytes() * 2 * static_cast<size_t>(n_attn_layers); }
  // Bytes of KV per token over all attention layers (for reporting).
  size_t BytesPerToken() const {
    return static_cast<size_t>(n_kv_heads) * head_dim * ElemBytes() * 2 * n_attn_layers;
  }
};

class KvBlock {
 public:
  explicit KvBlock(const KvLayout& layout) : data_(layout.BlockBytes()), slab_bytes_(layout.SlabBytes()) {}

  // K (kv=0) or V (kv=1) slab of one attention layer, head-major:
  // [kv_head][token_in_block][head_dim] elements, so decode attention reads
  // one head's positions as one contiguous run (a token-major slab made each
  // head's task read 1/n_kv_heads of every row: 2-3x slower from DRAM).
  uint8_t* Slab(int attn_layer, int kv) { return data_.data() + (2 * attn_layer + kv) * slab_bytes_; }
  const uint8_t* Slab(int attn_layer, int kv) const {
    return data_.data() + (2 * attn_layer + kv) * slab_bytes_;
  }

  size_t bytes() const { return data_.bytes(); }
  // All slabs as one run of bytes() bytes (the disk tier stores blocks whole).
  uint8_t* data() { return data_.data(); }
  const uint8_t* data() const { return data_.data(); }

  // Frozen blocks are shared and must never be written again.
  bool frozen() const { return frozen_.load(std::memory_order_acquire); }
  void Freeze() { frozen_.store(true, std::memory_order_release); }

  // A writable copy (copy-on-write).
  std::shared_ptr<KvBlock> CloneUnfrozen() const {
    auto copy = std::shared_ptr<KvBlock>(new KvBlock(data_.Clone(), slab_bytes_));
    return copy;
  }

 private:
  KvBlock(AlignedBuffer<uint8_t> data, size_t slab_bytes) : data_(std::move(data)), slab_bytes_(slab_bytes) {}
  AlignedBuffer<uint8_t> data_;
  size_t slab_bytes_;
  std::atomic<bool> frozen_{false};
};

using KvBlockRef = std::shared_ptr<KvBlock>;
using KvBlockTable = std::vector<KvBlockRef>;

// Whole recurrent state of a sequence at exactly `position` tokens.
//
// A reply-tail snapshot (model/reply_tail.h) also reaches further: `replay`
// holds the recurrence inputs of the next replay_tokens().size() tokens (layout:
// the model's), so the state at position() + k, for any k up to that size, is
// this state with the first k of them replayed, without a forward pass.
class RecurrentSnapshot {
 public:
  RecurrentSnapshot(int64_t position, AlignedBuffer<uint8_t> data)
      : position_(position), data_(std::move(data)) {}
  RecurrentSnapshot(int64_t position, AlignedBuffer<uint8_t> data, std::vector<int32_t> replay_tokens,
                    AlignedBuffer<uint8_t> replay)
      : position_(position), data_(std::move(data)), replay_tokens_(std::move(replay_tokens)),
        replay_(std::move(replay)) {}
  int64_t position() const { return position_; }
  const uint8_t* data() const { return data_.data(); }
  // Bytes of the state itself (what a restore at position() copies).
  size_t bytes() const { return data_.bytes(); }
  // Token ids consumed by positions (position(), position() + size()].
  const std::vector<int32_t>& replay_tokens() const { return replay_tokens_; }
  const uint8_t* replay_data() const { return replay_.data(); }
  // Everything held: the state, the replay log and its token ids.
  size_t held_bytes() const { return data_.bytes() + replay_.bytes() + replay_tokens_.size() * sizeof(int32_t); }

 private:
  int64_t position_;
  AlignedBuffer<uint8_t> data_;
  std::vector<int32_t> replay_tokens_;
  AlignedBuffer<uint8_t> replay_;
};

using RecurrentSnapshotRef = std::shared_ptr<const RecurrentSnapshot>;

}  // namespace cairn
