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
  // volatile-looking line starts of the first turn; 0 = none).
  int max_mark_checkpoints = 6;

  // Throws cairn::Error naming the offending field.
  void Validate() const;
};

}  // namespace cairn::cache
