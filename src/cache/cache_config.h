// Configuration of the prefix cache (one cache per loaded model, shared by all sessions).
#pragma once

#include <cstddef>
#include <cstdint>

namespace cairn::cache {

struct PrefixCacheConfig {
  // --no-prefix-cache turns this off: Lookup always misses, Insert does nothing.
  bool enabled = true;
  // Checkpoint mode: true when any layer is not truncatable (Gated DeltaNet,
  // conv, wrapped sliding window). Reuse then happens only at positions that
  // carry a recurrent checkpoint; dense models reuse any common prefix (trim).
  bool hybrid = false;
  // Tokens per KV block; must equal the model's KvLayout::block_tokens.
  int block_tokens = 64;
  // Hard cap on bytes held (unique KV blocks + unique recurrent snapshots).
  // Never exceeded after any operation. 8 GiB holds two 30k-token sessions of a
  // 27B hybrid (64 KiB KV/token, ~147 MiB per snapshot) with a dozen checkpoints each.
  size_t budget_bytes = size_t{8} << 30;
  // Rung spacing in tokens (--cache-rung-tokens); rungs sit at multiples of
  // this from absolute position 0. 0 disables rungs.
  int64_t rung_tokens = 4096;
  // Shorter shared prefixes are not reused; also the lowest checkpoint position.
  int64_t min_reuse = 16;
  // Short-prompt guard: an entry shorter than short_prompt_tokens whose insert
  // would force an eviction is not cached when every resident entry is at
  // least short_prompt_ratio times longer (title / warm-up requests must not
  // evict 30k-token agent sessions).
  int64_t short_prompt_tokens = 1024;
  int64_t short_prompt_ratio = 4;
  // Ladder cap per root-to-leaf path (checkpoints beyond it are thinned,
  // keeping the ladder spread out). Snapshots cost ~20-150 MiB each.
  int max_checkpoints_per_path = 32;
  // Message-start checkpoints planned per request (the last N starts).
  int max_message_checkpoints = 4;
  // Content-aware mark checkpoints planned per request (the first N
  // volatile-looking line starts of the first turn, strong signals first;
  // 0 = none), and at most this fraction of the checkpoint budget in
  // snapshot bytes (16 marks of a 0.8B Qwen3.5 are 310 MiB; a 27B one gets
  // 6 under the 8 GiB default budget).
  int max_mark_checkpoints = 16;
  double mark_budget_fraction = 0.25;
  // Reply tails (--cache-tail-tokens): after a generation, the last this-many
  // positions of the reply (at least) stay restorable (kind kTail); 0 = off.
  // Each logged token costs ~2 conv_dim + 2 n_v floats per recurrent layer
  // (~0.9 MiB on a 0.8B Qwen3.5), so the tail is short.
  int64_t tail_tokens = 16;
  // Checkpoint bytes (recurrent snapshots and tail logs) are held to this
  // fraction of budget_bytes (--cache-checkpoint-fraction); past it,
  // checkpoints go before KV blocks do, fine ones never hit first.
  double checkpoint_budget_fraction = 0.5;
  size_t checkpoint_budget_bytes() const {
    return static_cast<size_t>(static_cast<double>(budget_bytes) * checkpoint_budget_fraction);
  }

  // Throws cairn::Error naming the offending field.
  void Validate() const;
};

}  // namespace cairn::cache
