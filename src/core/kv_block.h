// Paged model state shared by the model, the prefix cache and speculation.
//
// Attention KV is stored in fixed-size blocks of `block_tokens` consecutive
// positions, aligned to absolute positions: block i holds positions
// [i * block_tokens, (i + 1) * block_tokens). One block holds those positions
// for every attention layer:
//   bytes = [attn_layer][K=0 | V=1][kv_head][token_in_block][head_dim] of `dtype`
// (K as Q8_0 with KvLayout::k_q8: one KvQ8Geometry region per KV head instead).
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

// K rows stored as Q8_0 (KvLayout::k_q8, `--cache-type-k q8_0`): ggml's Q8_0
// quantization (per 32 elements d = amax / 127 stored as F16, levels
// round(x / d) in [-127, 127]), laid out for attention's integer dot products
// with one key per 32-bit vector lane. One KV head's region of a K slab:
//   levels [head_dim / 32][8 quads][T][4] uint8 = level + 128, T = block_tokens
//          rounded up to 16 (a whole vector of keys never leaves the region)
//   scales [head_dim / 32][T] F16 bits
// so the 4 levels of quad t of block b of token j are the 4 bytes at
// ((b * 8 + t) * T + j) * 4. kernels/kv_write.cc writes it, kernels/attention.cc
// reads it. Needs head_dim % 32 == 0. The row stored is the key rotated by a
// Walsh-Hadamard transform (Rotation()), which spreads a few large elements
// (Qwen2's K biases) over the whole run so its 32-element blocks quantize finer;
// attention rotates the queries the same way, so q.k is unchanged.
struct KvQ8Geometry {
  static constexpr int kBlock = 32;         // elements per scale
  static constexpr int kTokenAlign = 16;    // T is a multiple of this
  static constexpr int kMaxHeadDim = 1024;  // a row the writer rotates on its stack
  int block_tokens = 0;
  int head_dim = 0;

  int64_t Tokens() const { return (block_tokens + kTokenAlign - 1) / kTokenAlign * kTokenAlign; }
  int Blocks() const { return head_dim / kBlock; }
  int64_t LevelBytes() const { return Tokens() * head_dim; }
  int64_t RegionBytes() const { return LevelBytes() + Tokens() * Blocks() * 2; }
  // Byte offset in a region of quad `quad` (0..head_dim/4) of token j, and of block b's scale.
  int64_t QuadOffset(int64_t quad, int64_t j) const { return (quad * Tokens() + j) * 4; }
  int64_t ScaleOffset(int64_t b, int64_t j) const { return LevelBytes() + (b * Tokens() + j) * 2; }
  // Size of the Walsh-Hadamard rotation applied to every run of that many
  // elements of a key row and of a query before they are quantized
  // (kernels/kv_write.h RotateForQ8K): the largest power of two dividing
  // head_dim when head_dim is a multiple of 64, else 0 (no rotation); the rule
  // of llama.cpp's rotation for quantized K caches.
  int Rotation() const {
    if (head_dim <= 0 || head_dim % 64 != 0) return 0;
    int size = 64;
    while (head_dim % (2 * size) == 0) size *= 2;
    return size;
  }
};

// Geometry of a model's KV blocks (fixed per model).
struct KvLayout {
  int n_attn_layers = 0;   // layers with attention KV (all layers for dense models)
  int n_kv_heads = 0;
  int head_dim = 0;
  DType dtype = DType::kF16;   // kF16 or kBF16: V's element type, and K's unless k_q8
  bool k_q8 = false;           // K stored as Q8_0 (KvQ8Geometry)
  int block_tokens = 64;

  size_t ElemBytes() const { return 2; }   // of an F16 / BF16 element
  DType KType() const { return k_q8 ? DType::kQ8_0 : dtype; }   // what K slabs hold
  KvQ8Geometry Q8() const { return KvQ8Geometry{block_tokens, head_dim}; }
  // Bytes of one K (kv = 0) or V (kv = 1) slab: one layer, one block.
  size_t SlabBytes(int kv) const {
    if (kv == 0 && k_q8) return static_cast<size_t>(Q8().RegionBytes()) * n_kv_heads;
    return static_cast<size_t>(block_tokens) * n_kv_heads * head_dim * ElemBytes();
  }
  // Byte offset of a slab in a block: [attn_layer][K | V].
  size_t SlabOffset(int attn_layer, int kv) const {
    return (SlabBytes(0) + SlabBytes(1)) * static_cast<size_t>(attn_layer) + (kv == 1 ? SlabBytes(0) : 0);
  }
  size_t BlockBytes() const { return (SlabBytes(0) + SlabBytes(1)) * static_cast<size_t>(n_attn_layers); }
  // Zeroes, in every slab of one block's bytes (BlockBytes() of them), what
  // positions [valid, block_tokens) hold (F16 rows; a Q8_0 K region's quads
  // and scales of those tokens), so the block's bytes depend only on its first
  // `valid` positions (sliding-window snapshots, model/state.cc).
  void ZeroTokensFrom(uint8_t* block, int64_t valid) const;
  // Copies what positions [t0, t1) hold, in every slab, from one block's bytes
  // to another's (same positions).
  void CopyTokens(const uint8_t* src, uint8_t* dst, int64_t t0, int64_t t1) const;
  // Bytes of KV per token over all attention layers (for reporting; Q8_0 K
  // without the padding of T).
  size_t BytesPerToken() const {
    const size_t v = static_cast<size_t>(head_dim) * ElemBytes();
    const size_t k = k_q8 ? static_cast<size_t>(head_dim) + static_cast<size_t>(head_dim) / 16 : v;
    return static_cast<size_t>(n_kv_heads) * (k + v) * n_attn_layers;
  }
};

class KvBlock {
 public:
  explicit KvBlock(const KvLayout& layout) : data_(layout.BlockBytes()), layout_(layout) {}

  // K (kv=0) or V (kv=1) slab of one attention layer, head-major:
  // [kv_head][token_in_block][head_dim] elements, so decode attention reads
  // one head's positions as one contiguous run (a token-major slab made each
  // head's task read 1/n_kv_heads of every row: 2-3x slower from DRAM).
  // (K as Q8_0: KvQ8Geometry's regions, one per KV head.)
  uint8_t* Slab(int attn_layer, int kv) { return data_.data() + layout_.SlabOffset(attn_layer, kv); }
  const uint8_t* Slab(int attn_layer, int kv) const { return data_.data() + layout_.SlabOffset(attn_layer, kv); }

  size_t bytes() const { return data_.bytes(); }
  // All slabs as one run of bytes() bytes (the disk tier stores blocks whole).
  uint8_t* data() { return data_.data(); }
  const uint8_t* data() const { return data_.data(); }

  // Frozen blocks are shared and must never be written again.
  bool frozen() const { return frozen_.load(std::memory_order_acquire); }
  void Freeze() { frozen_.store(true, std::memory_order_release); }

  // A writable copy (copy-on-write).
  std::shared_ptr<KvBlock> CloneUnfrozen() const {
    auto copy = std::shared_ptr<KvBlock>(new KvBlock(data_.Clone(), layout_));
    return copy;
  }

 private:
  KvBlock(AlignedBuffer<uint8_t> data, const KvLayout& layout) : data_(std::move(data)), layout_(layout) {}
  AlignedBuffer<uint8_t> data_;
  KvLayout layout_;   // where each slab starts (KvLayout::SlabOffset)
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
