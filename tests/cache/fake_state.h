// Fake model state for prefix-cache tests: tiny KV blocks (1 layer, 1 head,
// head_dim 4, B tokens: B * 16 bytes) whose bytes encode their block index and
// a per-sequence seed, and recurrent snapshots of a fixed size whose bytes
// encode their position, so a test can tell WHICH block/snapshot came back.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <memory>
#include <numeric>
#include <vector>

#include "cache/checkpoint_planner.h"
#include "cache/prefix_cache.h"
#include "core/kv_block.h"

namespace cairn::cache::testing {

inline constexpr size_t kSnapshotBytes = 256;

// A hybrid-model cache: blocks of `block_tokens`, a rung every `rung_tokens`
// (0: none), `budget_bytes` of RAM; the rest default.
inline PrefixCacheConfig HybridConfig(int block_tokens, int64_t rung_tokens, size_t budget_bytes) {
  PrefixCacheConfig config;
  config.hybrid = true;
  config.block_tokens = block_tokens;
  config.rung_tokens = rung_tokens;
  config.budget_bytes = budget_bytes;
  return config;
}

inline KvLayout TinyLayout(int block_tokens) {
  KvLayout layout;
  layout.n_attn_layers = 1;
  layout.n_kv_heads = 1;
  layout.head_dim = 4;
  layout.block_tokens = block_tokens;
  return layout;
}

// Rolling hash of tokens[0, j] for every j: what an exact KV row / recurrent
// state "is" in this fake model.
inline std::vector<uint64_t> PrefixHashes(std::span<const Token> tokens) {
  std::vector<uint64_t> out(tokens.size());
  uint64_t h = 1469598103934665603ull;
  for (size_t j = 0; j < tokens.size(); ++j) {
    h = (h ^ static_cast<uint32_t>(tokens[j])) * 1099511628211ull;
    h ^= h >> 29;
    out[j] = h;
  }
  return out;
}

inline uint64_t Checksum(const KvBlock& block) {
  const uint8_t* bytes = block.Slab(0, 0);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < block.bytes(); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

// K row of position `row` in a block (1 head x 4 dims x 2 bytes = 8 bytes).
inline uint64_t ReadRow(const KvBlock& block, int row) {
  uint64_t v;
  std::memcpy(&v, block.Slab(0, 0) + 8 * row, 8);
  return v;
}
inline void WriteRow(KvBlock& block, int row, uint64_t v) { std::memcpy(block.Slab(0, 0) + 8 * row, &v, 8); }

// A block with garbage rows (tests that only need sizes).
inline KvBlockRef MakeBlock(const KvLayout& layout, uint32_t tag) {
  auto block = std::make_shared<KvBlock>(layout);
  uint8_t* bytes = block->Slab(0, 0);
  for (size_t i = 0; i < block->bytes(); ++i) bytes[i] = static_cast<uint8_t>((tag * 131u + i * 7u) & 0xff);
  return block;
}

// Snapshot at `position` whose bytes hold the position and the prefix hash of
// the tokens it summarises, so a test can assert the RIGHT state came back.
inline RecurrentSnapshotRef MakeSnapshot(int64_t position, uint64_t prefix_hash = 0,
                                         size_t bytes = kSnapshotBytes) {
  AlignedBuffer<uint8_t> data(bytes);
  data.Zero();
  std::memcpy(data.data(), &position, sizeof(position));
  std::memcpy(data.data() + 8, &prefix_hash, sizeof(prefix_hash));
  return std::make_shared<const RecurrentSnapshot>(position, std::move(data));
}

inline RecurrentSnapshotRef SnapshotOf(std::span<const Token> tokens, int64_t position) {
  return MakeSnapshot(position, PrefixHashes(tokens.first(static_cast<size_t>(position))).back());
}

// A reply tail: the snapshot at `position` plus a fake replay log (8 bytes a
// token) of tokens[position, position + count).
inline constexpr size_t kTailBytesPerToken = 8;
inline RecurrentSnapshotRef TailOf(std::span<const Token> tokens, int64_t position, int64_t count) {
  AlignedBuffer<uint8_t> data(kSnapshotBytes);
  data.Zero();
  const uint64_t hash = PrefixHashes(tokens.first(static_cast<size_t>(position))).back();
  std::memcpy(data.data(), &position, sizeof(position));
  std::memcpy(data.data() + 8, &hash, sizeof(hash));
  AlignedBuffer<uint8_t> log(static_cast<size_t>(count) * kTailBytesPerToken);
  log.Zero();
  const auto logged = tokens.subspan(static_cast<size_t>(position), static_cast<size_t>(count));
  return std::make_shared<const RecurrentSnapshot>(position, std::move(data),
                                                   std::vector<int32_t>(logged.begin(), logged.end()), std::move(log));
}

inline int64_t SnapshotTag(const RecurrentSnapshot& snapshot) {
  int64_t position = 0;
  std::memcpy(&position, snapshot.data(), sizeof(position));
  return position;
}
inline uint64_t SnapshotHash(const RecurrentSnapshot& snapshot) {
  uint64_t h = 0;
  std::memcpy(&h, snapshot.data() + 8, sizeof(h));
  return h;
}

// Tokens [base, base + n) as a sequence (distinct sequences: distinct bases).
inline std::vector<Token> Seq(int64_t n, Token base = 1000) {
  std::vector<Token> out(static_cast<size_t>(n));
  std::iota(out.begin(), out.end(), base);
  return out;
}

inline std::vector<Token> Concat(std::vector<Token> a, const std::vector<Token>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// What the engine does with a lookup: restored blocks (copy-on-write of a
// partially reused last block), fresh blocks for the rest, and every row past
// the reuse point "computed" (row j = hash of tokens[0, j]).
inline KvBlockTable BuildTable(const KvLayout& layout, const LookupResult& hit, std::span<const Token> tokens) {
  const int64_t b = layout.block_tokens;
  const int64_t total = static_cast<int64_t>(tokens.size());
  KvBlockTable table = hit.blocks;
  if (hit.reuse_tokens % b != 0 && !table.empty() && total > hit.reuse_tokens) {
    table.back() = table.back()->CloneUnfrozen();  // we will write into it
  }
  while (static_cast<int64_t>(table.size()) * b < total) table.push_back(MakeBlock(layout, 0));
  const auto hashes = PrefixHashes(tokens);
  for (int64_t j = hit.reuse_tokens; j < total; ++j) WriteRow(*table[j / b], static_cast<int>(j % b), hashes[j]);
  return table;
}

inline KvBlockTable ColdTable(const KvLayout& layout, std::span<const Token> tokens) {
  return BuildTable(layout, LookupResult{}, tokens);
}

// True when the restore plan is exact for `prompt`: every reused KV row and
// the snapshot equal what a cold prefill of the prompt computes.
inline bool RestoreIsExact(const LookupResult& hit, std::span<const Token> prompt, int b) {
  const auto hashes = PrefixHashes(prompt);
  if (static_cast<int64_t>(hit.blocks.size()) != (hit.reuse_tokens + b - 1) / b) return false;
  for (int64_t j = 0; j < hit.reuse_tokens; ++j) {
    if (ReadRow(*hit.blocks[j / b], static_cast<int>(j % b)) != hashes[j]) return false;
  }
  for (const auto& block : hit.blocks) {
    if (!block->frozen()) return false;
  }
  if (hit.snapshot != nullptr) {
    // A reply tail's base state plus its first replay_tokens logged tokens,
    // which must be the prompt's.
    const int64_t base = hit.snapshot->position();
    if (base + hit.replay_tokens != hit.reuse_tokens) return false;
    if (SnapshotHash(*hit.snapshot) != hashes[base - 1]) return false;
    const auto& logged = hit.snapshot->replay_tokens();
    if (static_cast<int64_t>(logged.size()) < hit.replay_tokens) return false;
    for (int64_t k = 0; k < hit.replay_tokens; ++k) {
      if (logged[static_cast<size_t>(k)] != prompt[static_cast<size_t>(base + k)]) return false;
    }
  }
  return true;
}

// One simulated request: lookup, restore, plan checkpoints (hybrid), prefill
// with snapshots, insert prompt + generated tokens (+ optional end checkpoint).
struct RequestOutcome {
  LookupResult hit;
  std::vector<PlannedCheckpoint> planned;
  InsertResult inserted;
};

struct RequestOptions {
  std::vector<MessageStart> messages = {};
  int64_t unstable_tail = 1;      // stable boundary = prompt end - this
  std::vector<Token> generated = {};  // verified generated tokens inserted after the prompt
  bool end_checkpoint = false;
};

inline RequestOutcome RunRequest(PrefixCache& cache, const KvLayout& layout, const std::vector<Token>& prompt,
                                 const RequestOptions& options = {}) {
  RequestOutcome out;
  out.hit = cache.Lookup(LookupRequest{prompt, options.messages, {}});
  const int64_t n = static_cast<int64_t>(prompt.size());
  CheckpointPlanInput plan;
  plan.prompt_tokens = n;
  plan.stable_boundary = n - options.unstable_tail;
  plan.messages = options.messages;
  plan.reuse_tokens = out.hit.reuse_tokens;
  plan.lcp = out.hit.lcp;
  plan.cached_checkpoints = out.hit.cached_checkpoints;
  out.planned = PlanCheckpoints(cache.config(), plan);
  std::vector<Checkpoint> checkpoints;
  const std::vector<Token> all = Concat(prompt, options.generated);
  for (const PlannedCheckpoint& p : out.planned) checkpoints.push_back({p.position, SnapshotOf(all, p.position), p.kind});
  const int64_t total = static_cast<int64_t>(all.size());
  if (options.end_checkpoint && cache.config().hybrid) {
    checkpoints.push_back({total, SnapshotOf(all, total), CheckpointKind::kEnd});
  }
  const KvBlockTable table = BuildTable(layout, out.hit, all);
  out.inserted = cache.Insert(all, table, checkpoints);
  return out;
}

}  // namespace cairn::cache::testing
