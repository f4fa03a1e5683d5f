#include "model/state.h"

#include <cstring>

#include "core/error.h"

namespace cairn::model {

size_t StateSnapshot::bytes() const {
  size_t total = recurrent ? recurrent->bytes() : 0;
  for (const KvBlockRef& b : blocks) total += b->bytes();
  return total;
}

SequenceState::SequenceState(const ModelConfig& config, DType kv_dtype, int block_tokens) : config_(&config) {
  if (kv_dtype != DType::kF16 && kv_dtype != DType::kBF16) Fail("KV cache type must be f16 or bf16");
  kv_layout_.n_attn_layers = config.n_attn_layers();
  kv_layout_.n_kv_heads = config.n_head_kv;
  kv_layout_.head_dim = config.head_dim;
  kv_layout_.dtype = kv_dtype;
  kv_layout_.block_tokens = block_tokens;
  if (config.is_hybrid()) {
    conv_floats_ = static_cast<size_t>(config.ssm_conv_kernel - 1) * config.conv_dim();
    ssm_floats_ = static_cast<size_t>(config.ssm_n_v_heads) * config.ssm_d_state * config.ssm_d_state;
    recurrent_.Resize((conv_floats_ + ssm_floats_) * config.n_recurrent_layers());
  }
  Reset();
}

void SequenceState::Reset() {
  blocks_.clear();
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
}

bool SequenceState::Truncate(int64_t n) {
  if (n < 0 || n > n_tokens_) return false;
  if (n == n_tokens_) return true;
  if (config_->is_hybrid()) return false;
  RewindKv(n);
  return true;
}

void SequenceState::RewindKv(int64_t n) {
  CAIRN_CHECK(n >= 0 && n <= n_tokens_);
  const int64_t B = kv_layout_.block_tokens;
  blocks_.resize(static_cast<size_t>((n + B - 1) / B));
  n_tokens_ = n;
}

RecurrentSnapshotRef SequenceState::SnapshotRecurrent() const {
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
  if (config_->is_hybrid()) {
    if (n_tokens > 0 && !recurrent) Fail("state restore: hybrid model needs a recurrent snapshot");
    if (recurrent && (recurrent->position() != n_tokens || recurrent->bytes() != recurrent_.bytes())) {
      Fail("state restore: recurrent snapshot at {} ({} bytes) does not match {} tokens ({} bytes)",
           recurrent->position(), recurrent->bytes(), n_tokens, recurrent_.bytes());
    }
  }
  blocks_.assign(blocks.begin(), blocks.begin() + static_cast<std::ptrdiff_t>(needed));
  for (KvBlockRef& b : blocks_) b->Freeze();
  n_tokens_ = n_tokens;
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
  return total;
}

}  // namespace cairn::model
