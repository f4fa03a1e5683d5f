// `cairn bench` library: prefill and decode throughput of a loaded model,
// the bytes a decode step must read, and the per-category time split.
//
// A one-token warm-up (untimed) faults the mapped weights in first.
// Prefill: for each prompt length (0 = skip), a fresh state and random token ids, one
// Forward (chunked by chunk_tokens) returning the last token's logits.
// Decode at depth D: a state prefilled (untimed) to D tokens, then
// decode_tokens steps of one token with greedy (argmax) feedback; the state is
// restored to depth D afterwards so deeper depths continue from it.
// With DepthFill::kCopy the state is prefilled (really) to only
// min(D, fill_prompt_tokens) tokens and its KV blocks are then replicated
// up to D, the recurrent state kept as the prefill left it: a decode step
// reads and computes exactly as much at depth D whatever the cached values
// are, so decode timing is unchanged while a 16k-token prefill of a dense
// model (minutes on 2 cores) is skipped. The cached values are then not
// those of any real prompt: use it for timing only.
//
// Every phase records wall seconds and process CPU seconds / threads (the wall
// time the phase would take with `threads` uncontended cores; pool spin-waits
// count as busy, so it is pessimistic when the machine is oversubscribed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/profiler.h"
#include "core/thread_pool.h"
#include "model/bench/memory_probe.h"
#include "model/model.h"

namespace cairn::model::bench {

// How a decode depth is reached (see the file comment).
enum class DepthFill { kPrefill, kCopy };

struct BenchOptions {
  std::vector<int64_t> prompt_tokens = {512};
  std::vector<int64_t> depths = {0};
  int64_t decode_tokens = 32;
  int64_t chunk_tokens = 256;   // ForwardRequest::chunk_tokens for prefill
  DepthFill depth_fill = DepthFill::kPrefill;
  int64_t fill_prompt_tokens = 1024;   // kCopy: tokens really prefilled (>= one KV block)
  bool profile = false;
  bool k_q8 = false;   // --cache-type-k q8_0 (core/kv_block.h)
  uint64_t seed = 1;
  // Paired measurement (when probe != nullptr): after the timed decode steps,
  // paired_steps more steps from the same depth, each preceded by one probe
  // pass, plus one pass after the last. Step i's read rate (bytes per token /
  // step seconds) is divided by the mean rate of the passes just before and
  // after it: the fraction of the bandwidth ceiling measured at the same
  // moment, so the machine's drift between the probe and the decode cancels.
  // The passes evict the caches before every step (conservative).
  int64_t paired_steps = 0;
  BandwidthProbe* probe = nullptr;
  // Called with a short line before each phase starts (progress on stderr).
  void (*on_phase)(const char* what, int64_t tokens) = nullptr;
};

// Bytes a single decode step reads (and writes, for recurrent state).
struct DecodeBytes {
  size_t layer_weights = 0;   // every layer matrix + small F32 vectors
  size_t output_head = 0;     // output matrix (token_embd when tied)
  size_t embed_row = 0;       // one embedding row
  size_t kv_per_token = 0;    // K+V bytes of one position over all attention layers
  size_t recurrent_rw = 0;    // recurrent state (conv window + S) read + written
  // Total at `depth` cached tokens: attention reads depth + 1 positions and
  // writes one.
  size_t Total(int64_t depth) const {
    return layer_weights + output_head + embed_row + recurrent_rw +
           kv_per_token * static_cast<size_t>(depth + 2);
  }
};
DecodeBytes CountDecodeBytes(const Model& model, bool k_q8 = false);

struct PhaseTiming {
  int64_t tokens = 0;         // tokens processed in the timed part
  double wall_s = 0.0;
  double cpu_s = 0.0;         // process CPU seconds / threads
  double thread_cpu_s = 0.0;  // CPU seconds of the calling thread (profile base)
  double best_step_s = 0.0;   // decode: fastest single step
  double load_avg = 0.0;      // 1-minute load average when the phase ended
  prof::Totals profile{};     // when BenchOptions::profile

  double TokPerSecWall() const { return wall_s > 0 ? tokens / wall_s : 0.0; }
  double TokPerSecCpu() const { return cpu_s > 0 ? tokens / cpu_s : 0.0; }
  double TokPerSecBestStep() const { return best_step_s > 0 ? 1.0 / best_step_s : 0.0; }
};

struct PrefillResult {
  int64_t prompt_tokens = 0;
  PhaseTiming timing;
};

struct DecodeResult {
  int64_t depth = 0;
  int64_t prefilled = 0;        // tokens of the depth really prefilled (< depth: KV replicated)
  size_t bytes_per_token = 0;
  PhaseTiming timing;
  std::vector<double> paired_of_ceiling;   // per paired step (BenchOptions::probe)
};

struct BenchResult {
  std::vector<PrefillResult> prefill;
  std::vector<DecodeResult> decode;
};

// Runs the phases in order of increasing length; reuses a prompt's state for
// a decode depth of the same or a larger length.
BenchResult RunModelBench(const Model& model, const BenchOptions& options, ThreadPool& pool);

}  // namespace cairn::model::bench
