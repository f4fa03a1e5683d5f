#include "engine/spec_runner.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "core/timer.h"
#include "spec/draft_model_drafter.h"
#include "spec/lookup_drafter.h"
#include "spec/mtp_drafter.h"

namespace cairn::engine {
namespace {

constexpr int64_t kMinMeasuredTokens = 16;
constexpr int64_t kMeasurementLifetime = 20;

std::string Unavailable(spec::SpecMode mode) {
  if (mode == spec::SpecMode::kDraft) return "spec mode \"draft\" needs a draft model (start the server with --draft-model FILE)";
  return "spec mode \"mtp\" needs a model with an MTP (nextn) head; this model has none";
}

}  // namespace

SpecRunner::SpecRunner(const model::Model& target, std::string target_path, const model::Model* draft,
                       std::string draft_path, ThreadPool& pool, const std::string& default_mode, int max_cap)
    : target_(target), target_path_(std::move(target_path)), draft_(draft), draft_path_(std::move(draft_path)),
      pool_(pool), default_mode_(default_mode.empty() ? "auto" : default_mode), max_cap_(max_cap) {
  if (max_cap_ < 1 || max_cap_ > spec::kMaxDraft) Fail("--spec-max-cap must be in 1..{}, got {}", spec::kMaxDraft, max_cap_);
  const std::optional<spec::SpecMode> mode = spec::ParseSpecMode(default_mode_);
  if (!mode) Fail("unknown --spec mode \"{}\" (expected lookup, draft, mtp, baseline or auto)", default_mode_);
  if (*mode != spec::SpecMode::kAuto && !Available(*mode)) Fail("{}", Unavailable(*mode));
  lookup_ = std::make_unique<spec::LookupDrafter>();
  if (draft_ != nullptr) draft_drafter_ = std::make_unique<spec::DraftModelDrafter>(*draft_, target_.n_vocab(), pool_);
  if (target_.has_mtp()) mtp_drafter_ = std::make_unique<spec::MtpDrafter>(target_, pool_);
}

SpecRunner::~SpecRunner() = default;

bool SpecRunner::Available(spec::SpecMode mode) const {
  switch (mode) {
    case spec::SpecMode::kDraft: return draft_ != nullptr;
    case spec::SpecMode::kMtp: return target_.has_mtp();
    default: return true;
  }
}

SpecChoice SpecRunner::Resolve(const std::string& requested, bool reproducible) {
  SpecChoice choice;
  choice.requested = requested.empty() ? default_mode_ : requested;
  choice.reproducible = reproducible;
  const std::optional<spec::SpecMode> mode = spec::ParseSpecMode(choice.requested);
  if (!mode) {
    throw RequestError(fmt::format("spec: unknown mode \"{}\" (expected lookup, draft, mtp, baseline or auto)",
                                   choice.requested));
  }
  if (*mode == spec::SpecMode::kAuto) {
    choice.mode = reproducible ? spec::ResolveAutoMode(target_.has_mtp(), draft_ != nullptr) : PickAuto();
  } else {
    if (!Available(*mode)) throw RequestError(Unavailable(*mode));
    choice.mode = *mode;
  }
  return choice;
}

const spec::VerifyCostCurve& SpecRunner::Curve() {
  if (curve_.empty()) {
    const Stopwatch watch;
    curve_ = spec::CalibratedVerifyCost(target_, target_path_, pool_, /*use_disk=*/true, max_cap_ + 1);
    LogInfo("speculative decoding: verify cost by width {}..{} = {:.2f}..{:.2f} ms (calibrated in {:.2f} s)", 1,
            curve_.max_width(), curve_.seconds.front() * 1e3, curve_.seconds.back() * 1e3, watch.Seconds());
  }
  return curve_;
}

spec::CapController& SpecRunner::Controller(spec::SpecMode mode) {
  auto it = controllers_.find(mode);
  if (it != controllers_.end()) return *it->second;
  auto controller = std::make_unique<spec::CapController>(Curve(), PriorOptions(mode));
  spec::CapController& ref = *controller;
  controllers_.emplace(mode, std::move(controller));
  return ref;
}

spec::CapControllerOptions SpecRunner::PriorOptions(spec::SpecMode mode) {
  spec::CapControllerOptions o;
  o.max_cap = max_cap_;
  if (mode == spec::SpecMode::kDraft && draft_ != nullptr) {
    // Prior: one draft-model token costs about its own width-1 forward.
    o.draft_cost = spec::CalibratedVerifyCost(*draft_, draft_path_, pool_, true, 2).At(1);
  } else if (mode == spec::SpecMode::kMtp) {
    // Prior: one MTP step is one transformer block plus the LM head, roughly
    // 2 / (layers + 1) of a target forward; measured live afterwards.
    o.draft_cost = Curve().At(1) * 2.0 / (target_.config().n_layers + 1);
  }
  return o;
}

double SpecRunner::ModelledBestRate(spec::SpecMode mode) {
  const spec::VerifyCostCurve& curve = Curve();
  if (mode == spec::SpecMode::kBaseline) return 1.0 / curve.At(1);
  return Controller(mode).ModelledBestRate();
}

spec::SpecMode SpecRunner::PickAuto() {
  ++auto_requests_;
  spec::SpecMode best = spec::SpecMode::kBaseline;
  double best_rate = ModelledBestRate(best);
  for (spec::SpecMode m : {spec::SpecMode::kMtp, spec::SpecMode::kDraft, spec::SpecMode::kLookup}) {
    if (!Available(m)) continue;
    double r = ModelledBestRate(m);
    if (auto it = measured_.find(m);
        it != measured_.end() && auto_requests_ - it->second.at_request <= kMeasurementLifetime) {
      r = std::min(r, it->second.tokens_per_second);
    }
    if (r > best_rate) {
      best = m;
      best_rate = r;
    }
  }
  return best;
}

spec::DecodeOutput SpecRunner::Decode(const SpecChoice& choice, model::SequenceState& state,
                                      std::span<const float> last_logits, std::span<const float> prompt_hidden,
                                      sampling::Sampler& sampler, sampling::TokenHistory& history,
                                      spec::DecodeOptions options) {
  if (choice.mode == spec::SpecMode::kBaseline) {
    return spec::DecodePlain(target_, state, last_logits, sampler, history, options, pool_);
  }
  spec::Drafter* drafter = nullptr;
  switch (choice.mode) {
    case spec::SpecMode::kLookup: drafter = lookup_.get(); break;
    case spec::SpecMode::kDraft: drafter = draft_drafter_.get(); break;
    case spec::SpecMode::kMtp: drafter = mtp_drafter_.get(); break;
    default: break;
  }
  if (drafter == nullptr) Fail("spec mode {} has no drafter", spec::SpecModeName(choice.mode));
  if (mtp_drafter_) mtp_drafter_->set_reuse_state(!choice.reproducible);
  std::unique_ptr<spec::CapController> own;
  if (choice.reproducible) {
    // Same start and no timing input every time: the same seed gives the same tokens.
    spec::CapControllerOptions o = PriorOptions(choice.mode);
    o.measure_draft_cost = false;
    own = std::make_unique<spec::CapController>(Curve(), o);
    options.controller = own.get();
  } else {
    options.controller = &Controller(choice.mode);
  }
  return spec::DecodeSpeculative(target_, state, last_logits, prompt_hidden, sampler, history, *drafter, options,
                                 pool_);
}

void SpecRunner::RecordOutcome(const SpecChoice& choice, const spec::SpecStats& stats) {
  if (choice.mode == spec::SpecMode::kBaseline || stats.committed < kMinMeasuredTokens || stats.seconds <= 0) return;
  const double tps = static_cast<double>(stats.committed) / stats.seconds;
  MeasuredRate& m = measured_[choice.mode];
  m.tokens_per_second = m.at_request < 0 ? tps : 0.5 * m.tokens_per_second + 0.5 * tps;
  m.at_request = auto_requests_;
}

Json SpecRunner::StatsJson(const SpecChoice& choice, const spec::SpecStats& s) const {
  Json j = Json::object();
  j["mode"] = spec::SpecModeName(choice.mode);
  j["requested"] = choice.requested;
  j["rounds"] = s.rounds;
  j["target_forwards"] = s.target_forwards;
  j["committed"] = s.committed;
  j["drafted"] = s.drafted;
  j["accepted"] = s.accepted;
  j["acceptance_rate"] = s.acceptance_rate();
  j["mean_committed_per_round"] = s.mean_committed_per_round();
  j["cap"] = s.cap;
  if (auto it = controllers_.find(choice.mode); it != controllers_.end()) {
    j["next_cap"] = it->second->current_cap();
    j["live_acceptance"] = it->second->acceptance();
  }
  j["accept_histogram"] = s.accept_histogram;
  if (choice.mode == spec::SpecMode::kDraft && draft_drafter_) j["draft_reused_tokens"] = draft_drafter_->reused_tokens();
  if (choice.mode == spec::SpecMode::kMtp && mtp_drafter_) j["mtp_reused_rows"] = mtp_drafter_->reused_rows();
  return j;
}

}  // namespace cairn::engine
