// Speculative decoding inside the engine: owns the drafters (lookup, the
// draft model with its own persistent state, the target's MTP head), one
// adaptive cap controller per mode (their live acceptance carries over from
// request to request), and the `auto` choice.
//
// auto = the mode whose modelled decode rate is highest on this machine:
//   rate(mode) = max over caps k of E[committed](a_mode, k) /
//                (verify(k + 1) + k * draft_cost_mode)
// with verify(w) the target's measured verify-cost curve (calibrated once per
// model and machine, cached on disk), a_mode the mode's live acceptance EMA
// and draft_cost_mode its measured per-token drafting time; baseline's rate is
// 1 / verify(1). A mode that has never run keeps its prior acceptance, so it
// is tried as soon as the current choice measures worse than that prior.
// Every mode is lossless, so exploring never changes an answer, only speed.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "core/thread_pool.h"
#include "engine/service.h"
#include "model/model.h"
#include "sampling/sampler.h"
#include "sampling/token_history.h"
#include "spec/cap_controller.h"
#include "spec/race.h"
#include "spec/speculative_decoder.h"

namespace cairn::spec {
class DraftModelDrafter;
class LookupDrafter;
class MtpDrafter;
}  // namespace cairn::spec

namespace cairn::engine {

struct SpecChoice {
  spec::SpecMode mode = spec::SpecMode::kBaseline;  // never kAuto
  std::string requested;                            // as asked ("auto", "lookup", ...)
  bool reproducible = false;                        // seeded sampling (see Resolve)
};

class SpecRunner {
 public:
  // `target`, `draft` (may be null) and `pool` outlive the runner. Throws
  // cairn::Error when default_mode is unknown or needs what is not loaded.
  SpecRunner(const model::Model& target, std::string target_path, const model::Model* draft, std::string draft_path,
             ThreadPool& pool, const std::string& default_mode, int max_cap = 16);
  ~SpecRunner();

  // Resolves a request's mode ("" = the server default). Throws RequestError
  // for unknown modes and for draft/mtp when the model/head is not loaded.
  // `reproducible` (seeded sampling): the choice and the cap schedule must
  // depend on the request alone, so auto takes the static preference
  // (mtp > draft > lookup) and the decode gets a fresh controller that does
  // not learn from timing.
  SpecChoice Resolve(const std::string& requested, bool reproducible = false);

  // True when the prefill must keep every prompt token's hidden row.
  static bool NeedsPromptHidden(spec::SpecMode mode) { return mode == spec::SpecMode::kMtp; }

  // Runs the decode (plain for baseline). `prompt_hidden` covers fed tokens
  // [options.hidden_from, N) for mtp.
  spec::DecodeOutput Decode(const SpecChoice& choice, model::SequenceState& state, std::span<const float> last_logits,
                            std::span<const float> prompt_hidden, sampling::Sampler& sampler,
                            sampling::TokenHistory& history, spec::DecodeOptions options);

  // x_cairn.spec for a finished decode.
  Json StatsJson(const SpecChoice& choice, const spec::SpecStats& stats) const;

  // Feeds a finished decode's measured speed to `auto` (see the file comment).
  void RecordOutcome(const SpecChoice& choice, const spec::SpecStats& stats);

  // Measures (or loads from the disk cache) the verify-cost curve now, so the
  // first speculative request does not pay for it in its TTFT.
  void Calibrate() { Curve(); }

  bool has_draft_model() const { return draft_ != nullptr; }
  bool has_mtp() const { return target_.has_mtp(); }
  const std::string& default_mode() const { return default_mode_; }

 private:
  const spec::VerifyCostCurve& Curve();
  spec::CapController& Controller(spec::SpecMode mode);
  // Starting options of a mode's controller (priors only, no live state).
  spec::CapControllerOptions PriorOptions(spec::SpecMode mode);
  double ModelledBestRate(spec::SpecMode mode);
  spec::SpecMode PickAuto();
  bool Available(spec::SpecMode mode) const;

  const model::Model& target_;
  std::string target_path_;
  const model::Model* draft_;
  std::string draft_path_;
  ThreadPool& pool_;
  std::string default_mode_;
  int max_cap_;  // most drafts per round; the verify curve is measured to width max_cap_ + 1
  spec::VerifyCostCurve curve_;
  std::map<spec::SpecMode, std::unique_ptr<spec::CapController>> controllers_;
  // Measured decode speed per speculative mode (tokens/s, EMA over requests
  // of >= kMinMeasuredTokens), and the auto request count it was last updated
  // at: auto trusts a measurement for kMeasurementLifetime auto requests.
  struct MeasuredRate {
    double tokens_per_second = 0.0;
    int64_t at_request = -1;
  };
  std::map<spec::SpecMode, MeasuredRate> measured_;
  int64_t auto_requests_ = 0;
  std::unique_ptr<spec::LookupDrafter> lookup_;
  std::unique_ptr<spec::DraftModelDrafter> draft_drafter_;
  std::unique_ptr<spec::MtpDrafter> mtp_drafter_;
};

}  // namespace cairn::engine
