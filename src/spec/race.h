// Race: run several decoding modes on the same prompt and compare their
// token ids with plain decoding (mlx-dspark-spec.md §4.10 (3)). Library side
// of `cairn race`; tests use it on every architecture and mode.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/model.h"
#include "spec/draft_model_drafter.h"
#include "spec/spec_stats.h"

namespace cairn::spec {

// "baseline", "lookup", "draft", "mtp", "auto".
enum class SpecMode { kBaseline, kLookup, kDraft, kMtp, kAuto };
std::optional<SpecMode> ParseSpecMode(const std::string& name);
std::string SpecModeName(SpecMode mode);

// auto: mtp when the target has an MTP head, else draft when a draft model is
// loaded, else lookup; the adaptive cap controller then falls back to plain
// decoding whenever the measured verify curve and live acceptance say
// speculation is slower (cap 0), so auto is never worse than baseline by more
// than the periodic probes.
SpecMode ResolveAutoMode(bool has_mtp, bool has_draft_model);

struct RaceOptions {
  std::vector<SpecMode> modes = {SpecMode::kBaseline, SpecMode::kLookup};
  int max_tokens = 64;
  float temperature = 0.0f;
  uint64_t seed = 1;
  int cap = 4;                       // fixed cap; <= 0 = adaptive (CapController)
  std::string target_path;           // for the calibration cache (adaptive only)
  const model::Model* draft_model = nullptr;
  DraftModelOptions draft_options;   // mode 'draft': head vocabulary, early stop
  std::vector<int32_t> stop_tokens;
};

struct RaceArm {
  SpecMode mode = SpecMode::kBaseline;
  std::vector<int32_t> tokens;       // emitted ids
  SpecStats stats;
  bool identical = true;             // same ids as the baseline arm
  // First divergence from the baseline (when !identical): index into tokens,
  // the baseline's and this arm's token there (-1 past an arm's end), and the
  // target's logit margin top1 - top2 at that position (given the common prefix).
  int64_t divergence = -1;
  int32_t baseline_token = -1;
  int32_t arm_token = -1;
  float margin = 0.0f;
};

// Runs the baseline first (always, even when not listed: it is the
// reference), then every listed mode, each from a fresh target state.
std::vector<RaceArm> RunRace(const model::Model& target, std::span<const int32_t> prompt, const RaceOptions& options,
                             ThreadPool& pool);

// Target logit margin top1 - top2 after prompt + prefix.
float LogitMargin(const model::Model& target, std::span<const int32_t> prompt, std::span<const int32_t> prefix,
                  ThreadPool& pool);

}  // namespace cairn::spec
