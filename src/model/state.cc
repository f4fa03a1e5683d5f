#include "model/state.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace cairn::model {

size_t StateSnapshot::bytes() const {
  size_t total = recurrent ? recurrent->bytes() : 0;
  for (const KvBlockRef& b : blocks) total += b->bytes();
  return total;
}

SequenceState::SequenceState(const ModelConfig& config, DType kv_dtype, int block_tokens, bool k_q8)
    : config_(&config) {
  if (kv_dtype != DType::kF16 && kv_dtype != DType::kBF16) Fail("KV cache type must be f16 or bf16");
  if (k_q8 && config.n_attn_layers() > 0) {
    if (config.head_dim % KvQ8Geometry::kBlock != 0 || config.head_dim > KvQ8Geometry::kMaxHeadDim) {
      Fail("--cache-type-k q8_0 needs a head dimension divisible by 32 and at most {} (this model: {})",
           KvQ8Geometry::kMaxHeadDim, config.head_dim);
    }
  }
  kv_layout_.n_attn_layers = config.n_attn_layers();
  kv_layout_.n_kv_heads = config.n_head_kv;
  kv_layout_.head_dim = config.head_dim;
  kv_layout_.dtype = kv_dtype;
  kv_layout_.k_q8 = k_q8;
  kv_layout_.block_tokens = block_tokens;
  if (config.has_sliding()) {
    swa_layout_ = kv_layout_;
    swa_layout_.n_attn_layers = config.n_sliding_layers();
    // Slots a window of W - 1 positions can touch (+1 for the misaligned case).
    swa_slots_ = (config.sliding_window - 1 + block_tokens - 1) / block_tokens + 1;
  }
  if (config.is_hybrid()) {
    conv_floats_ = static_cast<size_t>(config.ssm_conv_kernel - 1) * config.conv_dim();
    ssm_floats_ = static_cast<size_t>(config.ssm_n_v_heads) * config.ssm_d_state * config.ssm_d_state;
    recurrent_.Resize((conv_floats_ + ssm_floats_) * config.n_recurrent_layers());
  }
  Reset();
}

void SequenceState::Reset() {
  blocks_.clear();
  swa_blocks_.clear();
  n_tokens_ = 0;
  recurrent_.Zero();
}

KvBlock& SequenceState::WritableBlock(int64_t index) {
  CAIRN_CHECK(index >= 0);
  while (static_cast<int64_t>(blocks_.size()) <= index) blocks_.push_back(std::make_shared<KvBlock>(kv_layout_));
  KvBlockRef& ref = blocks_[index];
  // Frozen blocks are shared with snapshots/the cache; a block referenced
  // elsewhere (use_count > 1) is also treated as shared.
  if (ref->frozen() || ref.use_count() > 1) ref = ref->CloneUnfrozen();
  return *ref;
}

void SequenceState::ReserveTokens(int64_t n) {
  const int64_t B = kv_layout_.block_tokens;
  const int64_t needed = (n + B - 1) / B;
  for (int64_t i = n_tokens_ / B; i < needed; ++i) WritableBlock(i);
  if (config_->has_sliding()) {
    for (int64_t i = n_tokens_ / B; i < needed; ++i) WritableSwaBlock(i);
  }
}

KvBlock& SequenceState::WritableSwaBlock(int64_t index) {
  CAIRN_CHECK(index >= 0 && config_->has_sliding());
  if (static_cast<int64_t>(swa_blocks_.size()) <= index) swa_blocks_.resize(static_cast<size_t>(index) + 1);
  KvBlockRef& ref = swa_blocks_[index];
  if (!ref) {
    ref = std::make_shared<KvBlock>(swa_layout_);
  } else if (ref->frozen() || ref.use_count() > 1) {
    ref = ref->CloneUnfrozen();
  }
  return *ref;
}

int64_t SequenceState::WindowFirstBlock(int64_t n) const {
  const int64_t first_key = std::max<int64_t>(0, n - config_->sliding_window + 1);
  return first_key / kv_layout_.block_tokens;
}

void SequenceState::ReleaseSlidingBefore(int64_t keep_from) {
  const int64_t B = kv_layout_.block_tokens;
  const int64_t end = std::min<int64_t>(std::max<int64_t>(0, keep_from) / B, static_cast<int64_t>(swa_blocks_.size()));
  for (int64_t b = 0; b < end; ++b) swa_blocks_[b].reset();
}

RecurrentSnapshotRef SequenceState::SnapshotWindowAt(int64_t p) const {
  CAIRN_CHECK(p >= 0 && p <= n_tokens_);
  const size_t block_bytes = swa_layout_.BlockBytes();
  AlignedBuffer<uint8_t> bytes(static_cast<size_t>(swa_slots_) * block_bytes);
  std::memset(bytes.data(), 0, bytes.bytes());
  const int64_t B = kv_layout_.block_tokens;
  const int64_t end = (p + B - 1) / B;   // blocks holding positions < p
  for (int64_t b = WindowFirstBlock(p), i = 0; b < end; ++b, ++i) {
    CAIRN_CHECK(i < swa_slots_ && b < static_cast<int64_t>(swa_blocks_.size()) && swa_blocks_[b]);
    std::memcpy(bytes.data() + i * block_bytes, swa_blocks_[b]->Slab(0, 0), block_bytes);
    // Canonical blob: positions >= p of the last block (written by a longer
    // pass, or stale) are zeroed, so the blob depends only on the first p tokens.
    swa_layout_.ZeroTokensFrom(bytes.data() + i * block_bytes, std::min<int64_t>(B, p - b * B));
  }
  return std::make_shared<const RecurrentSnapshot>(p, std::move(bytes));
}

bool SequenceState::Truncate(int64_t n) {
  if (n < 0 || n > n_tokens_) return false;
  if (n == n_tokens_) return true;
  if (config_->is_hybrid()) return false;
  if (config_->has_sliding()) {
    for (int64_t b = WindowFirstBlock(n); b < (n + kv_layout_.block_tokens - 1) / kv_layout_.block_tokens; ++b) {
      if (b >= static_cast<int64_t>(swa_blocks_.size()) || !swa_blocks_[b]) return false;   // window already freed
    }
  }
  RewindKv(n);
  return true;
}

void SequenceState::RewindKv(int64_t n) {
  CAIRN_CHECK(n >= 0 && n <= n_tokens_);
  const int64_t B = kv_layout_.block_tokens;
  blocks_.resize(static_cast<size_t>((n + B - 1) / B));
  if (swa_blocks_.size() > blocks_.size()) swa_blocks_.resize(blocks_.size());
  n_tokens_ = n;
}

void SequenceState::AdoptKv(const KvBlockTable& blocks, int64_t n) {
  CAIRN_CHECK(n >= n_tokens_ && !config_->has_sliding());
  const int64_t B = kv_layout_.block_tokens;
  const size_t needed = static_cast<size_t>((n + B - 1) / B);
  if (blocks.size() < needed) Fail("state restore: {} blocks cannot hold {} tokens", blocks.size(), n);
  blocks_.assign(blocks.begin(), blocks.begin() + static_cast<std::ptrdiff_t>(needed));
  for (KvBlockRef& b : blocks_) b->Freeze();
  n_tokens_ = n;
}

RecurrentSnapshotRef SequenceState::SnapshotRecurrent() const {
  if (config_->has_sliding()) return SnapshotWindowAt(n_tokens_);
  if (recurrent_.empty()) return nullptr;
  AlignedBuffer<uint8_t> bytes(recurrent_.bytes());
  std::memcpy(bytes.data(), recurrent_.data(), recurrent_.bytes());
  return std::make_shared<const RecurrentSnapshot>(n_tokens_, std::move(bytes));
}

StateSnapshot SequenceState::Snapshot() {
  StateSnapshot s;
  s.n_tokens = n_tokens_;
  const int64_t B = kv_layout_.block_tokens;
  blocks_.resize(static_cast<size_t>((n_tokens_ + B - 1) / B));
  for (KvBlockRef& b : blocks_) b->Freeze();
  s.blocks = blocks_;
  s.recurrent = SnapshotRecurrent();
  return s;
}

void SequenceState::Restore(const StateSnapshot& snapshot) {
  RestorePrefix(snapshot.blocks, snapshot.n_tokens, snapshot.recurrent);
}

void SequenceState::RestorePrefix(const KvBlockTable& blocks, int64_t n_tokens, const RecurrentSnapshotRef& recurrent) {
  const int64_t B = kv_layout_.block_tokens;
  const size_t needed = static_cast<size_t>((n_tokens + B - 1) / B);
  if (blocks.size() < needed) Fail("state restore: {} blocks cannot hold {} tokens", blocks.size(), n_tokens);
  if (config_->checkpointed()) {
    const size_t expect = config_->has_sliding() ? static_cast<size_t>(swa_slots_) * swa_layout_.BlockBytes()
                                                 : recurrent_.bytes();
    if (n_tokens > 0 && !recurrent) Fail("state restore: this model needs a recurrent/window snapshot");
    if (recurrent && (recurrent->position() != n_tokens || recurrent->bytes() != expect)) {
      Fail("state restore: recurrent snapshot at {} ({} bytes) does not match {} tokens ({} bytes)",
           recurrent->position(), recurrent->bytes(), n_tokens, expect);
    }
  }
  blocks_.assign(blocks.begin(), blocks.begin() + static_cast<std::ptrdiff_t>(needed));
  for (KvBlockRef& b : blocks_) b->Freeze();
  n_tokens_ = n_tokens;
  if (config_->has_sliding()) {
    // Fresh private sliding blocks for the window of n_tokens, from the blob.
    swa_blocks_.assign(needed, nullptr);
    const size_t block_bytes = swa_layout_.BlockBytes();
    for (int64_t b = WindowFirstBlock(n_tokens), i = 0; b < static_cast<int64_t>(needed); ++b, ++i) {
      KvBlock& block = WritableSwaBlock(b);
      std::memcpy(block.Slab(0, 0), recurrent->data() + i * block_bytes, block_bytes);
    }
  }
  if (!recurrent_.empty()) {
    if (recurrent && n_tokens > 0) {
      std::memcpy(recurrent_.data(), recurrent->data(), recurrent_.bytes());
    } else {
      recurrent_.Zero();
    }
  }
}

size_t SequenceState::bytes() const {
  size_t total = recurrent_.bytes();
  for (const KvBlockRef& b : blocks_) total += b->bytes();
  for (const KvBlockRef& b : swa_blocks_) total += b ? b->bytes() : 0;
  return total;
}

}  // namespace cairn::model
