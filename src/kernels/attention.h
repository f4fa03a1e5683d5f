// Causal multi-row attention over the paged F16/BF16 KV cache (or a Q8_0 K
// cache, KvView::k_q8: integer scores, kernels/attention_q8k-inl.h, docs/kv-cache-q8.md),
// with online softmax (flash-style), GQA, and deterministic split-KV for decode.
//
// EXACTNESS. The output of a query row at absolute position p depends only on
// (q row, K/V of positions [0, p], block_tokens, SIMD target): keys are
// visited in tiles = KV blocks (aligned to absolute positions), tiles are
// grouped into fixed partitions of kAttentionPartitionTokens absolute
// positions, each partition is reduced with the online softmax in tile order,
// and partitions are merged left to right with one fixed formula. Whether the
// partitions are computed by one thread (prefill) or by different threads
// (split-KV decode), and however a prompt is split into calls (one-shot,
// chunked, token by token, speculative verification), a row's bits are the
// same. Tested bit-for-bit (tests/kernels/attention_*_test.cc).
//
// Canonical arithmetic (attention.cc has the formulas), per (query, key) and
// per output element, never per micro-tile (the Q8_0 K cache's score:
// attention_q8k-inl.h; the rest is the same):
//   score  q.k: q pre-multiplied by scale (one rounding per element); lane i
//          of one vector accumulator is the FMA chain over d = i, i + N, ...
//          ascending (N = lanes of the target), the lanes are summed by one
//          fixed tree, then a scalar FMA chain over the head_dim % N tail.
//   tile   m' = max(m, max s), rho = exp(m - m'), p = exp(s - m'),
//          l = rho l + (lane-wise sum of p, then one fixed tree),
//          o = rho o, then o = fma(p_j, v_j, o) for j ascending, per element.
//   merge  partitions left to right: M = max, a = exp(M_old - M),
//          b = exp(m - M), L = a L + b l, O = fma(a, O, b o); out = O / L.
// The micro-tiles (16-register targets: scores 4/2/1 queries x 2/4/8 keys,
// P.V 4/2/1 queries x 3/4/8 vectors of columns; AVX-512: 16 accumulators,
// scores x 4/8/16 keys, P.V x 4/8/8 vectors; P.V over 32-key passes) only decide which pairs share
// a loaded K/V vector; every pair keeps its own accumulator and order.
//
// Work split (never changes a row's bits): prefill tasks are (kv_head, block
// of rows with at least 8 rows and 32 queries), each processing the
// `n_heads / n_kv_heads` query heads of its KV head together so each K/V row
// is read once per task for all its queries, walking the partitions in order.
// A single row block over several partitions (decode, speculative
// verification) or too few tasks for the threads switches to split-KV: tasks
// (row block, partition, group of KV heads), head group fastest, then a
// second pass merges each (row, head)'s partitions. A task walks its
// partition tile by tile and, per tile, its heads in order; the heads' runs
// of a head-major block slab (`[kv_head][token][head_dim]`) are adjacent, so
// a group of heads streams one long contiguous run of K and of V per tile.
// The group size trades run length (memory streams faster in long runs)
// against the number of tasks to balance over the threads; a small cost
// model picks it per call (attention.cc, SplitHeadsPerTask).
// While a tile's scores are computed, its V rows and the next tile's K rows
// are software-prefetched (decode 1.3-2.6x faster with it on this VM).
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/thread_pool.h"

namespace cairn::kernels {

// Partition length of the KV reduction (absolute positions, rounded up to a
// multiple of block_tokens). 2048 keys of a 256-dim head are 1 MiB of F16 K+V
// — large enough that the per-partition merge is negligible, small enough
// that a 32k-token decode splits into 16 parallel pieces per KV head.
inline constexpr int64_t kAttentionPartitionTokens = 2048;

// One attention layer's view of a sequence's KV blocks.
struct KvView {
  DType dtype = DType::kF16;          // kF16 or kBF16: V's elements, and K's unless k_q8
  bool k_q8 = false;                  // K slabs hold Q8_0 regions (core/kv_block.h, KvQ8Geometry)
  int block_tokens = 64;
  int n_kv_heads = 0;
  int head_dim = 0;
  // [ceil(n_tokens / block_tokens)] slabs, each head-major [n_kv_heads][block_tokens][head_dim]
  // (one head's positions contiguous, kernels/kv_write.h):
  // k_blocks[i] = KvBlock::Slab(layer, 0) of the block holding positions
  // [i * block_tokens, (i + 1) * block_tokens); v_blocks likewise (Slab(layer, 1)).
  const uint8_t* const* k_blocks = nullptr;
  const uint8_t* const* v_blocks = nullptr;
  int64_t n_tokens = 0;               // positions [0, n_tokens) are valid
};

struct AttentionParams {
  int n_heads = 0;        // query heads; a multiple of n_kv_heads (GQA group = ratio)
  int n_kv_heads = 0;
  int head_dim = 0;
  float scale = 0.0f;     // usually 1 / sqrt(head_dim)
  // Query addressing: head h of row r at q + r * q_row_stride + h * q_head_stride.
  // 0 means dense: q_row_stride = n_heads * head_dim, q_head_stride = head_dim.
  // (Qwen3.5 interleaves q with its gate: q_head_stride = 2 * head_dim.)
  int64_t q_row_stride = 0;
  int64_t q_head_stride = 0;
  // KV heads per split-KV task (decode, verification): 0 lets the kernel
  // choose; a divisor of n_kv_heads forces it (tests, benchmarks). Never
  // changes the output bits.
  int split_heads_per_task = 0;
  // Sliding window (gemma3 local layers): the row at position p sees keys
  // [max(0, p - window + 1), p] only. 0 = full causal attention. Tiles and
  // partitions wholly left of a row's window are skipped for that row (their
  // KV blocks may be absent: null in KvView), keys left of the window inside a
  // visited tile get probability exactly 0; which ones depends only on p, so
  // the exactness guarantee above holds unchanged.
  int64_t window = 0;
};

// q:   query rows (addressing above), F32, already normed and rotated.
// Row i is at absolute position q_pos0 + i and attends to KV positions
// [0, q_pos0 + i] (or its window, above); requires q_pos0 + n_rows <= kv.n_tokens (write the rows'
// own K/V first, kernels/kv_write.h).
// out: [n_rows][n_heads][head_dim] F32.
void Attention(const AttentionParams& p, const float* q, int64_t n_rows, int64_t q_pos0,
               const KvView& kv, float* out, ThreadPool& pool);

}  // namespace cairn::kernels
