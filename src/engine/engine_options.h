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
  bool verbose = false;             // load progress and logs

  // Prefix cache.
  bool prefix_cache = true;
  int64_t cache_ram_mb = 0;         // 0 = a quarter of physical RAM, at most 8 GiB
  int64_t cache_rung_tokens = 4096;
  int64_t cache_min_reuse = 16;

  // Speculative decoding.
  std::string spec_mode = "auto";   // lookup | draft | mtp | baseline | auto
  std::string draft_model_path;
  int spec_max_cap = 16;            // most drafts per round (verify widths calibrated up to this + 1)

  int64_t prefill_chunk_tokens = 512;
};

}  // namespace cairn::engine
