// Settings of a generation engine (from `cairn serve` / `cairn run` flags).
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.h"

namespace cairn::engine {

struct EngineOptions {
  std::string model_path;           // GGUF file
  int threads = 0;                  // 0 = all cores
  int64_t context = 0;              // max tokens per sequence; 0 = min(model's, 65536)
  DType kv_dtype = DType::kF16;
  bool k_q8 = false;                // --cache-type-k q8_0: K rows as Q8_0 (core/kv_block.h)
  bool verbose = false;             // load progress and logs

  // Prefix cache.
  bool prefix_cache = true;
  int64_t cache_ram_mb = 0;         // 0 = a quarter of physical RAM, at most 8 GiB
  int64_t cache_rung_tokens = 4096;
  int64_t cache_min_reuse = 16;
  int64_t cache_tail_tokens = 16;   // reply positions kept restorable on hybrids (0 = off)
  double cache_checkpoint_fraction = 0.5;  // share of the RAM budget checkpoints may hold
  // Disk tier (docs/disk-cache.md); `cairn serve` turns it on (--no-disk-cache: off).
  bool disk_cache = false;
  std::string cache_dir;            // "" = $XDG_CACHE_HOME/cairn/kv or ~/.cache/cairn/kv
  double cache_disk_gb = 0;         // 0 = min(20 GiB, half the free space there)
  // Memory guard: shed the RAM tier in grades under memory pressure.
  bool memory_guard = false;

  // Speculative decoding.
  std::string spec_mode = "auto";   // lookup | draft | mtp | baseline | auto
  std::string draft_model_path;
  std::string draft_quant = "auto";  // draft matrices re-encoded at load (spec::DraftNarrowType)
  int spec_max_cap = 16;            // most drafts per round (verify widths calibrated up to this + 1)

  int64_t prefill_chunk_tokens = 512;
};

}  // namespace cairn::engine
