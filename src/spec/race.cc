#include "spec/race.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "core/error.h"
#include "spec/cap_controller.h"
#include "spec/draft_model_drafter.h"
#include "spec/lookup_drafter.h"
#include "spec/mtp_drafter.h"
#include "spec/speculative_decoder.h"

namespace cairn::spec {

std::optional<SpecMode> ParseSpecMode(const std::string& name) {
  if (name == "baseline") return SpecMode::kBaseline;
  if (name == "lookup") return SpecMode::kLookup;
  if (name == "draft") return SpecMode::kDraft;
  if (name == "mtp") return SpecMode::kMtp;
  if (name == "auto") return SpecMode::kAuto;
  return std::nullopt;
}

std::string SpecModeName(SpecMode mode) {
  switch (mode) {
    case SpecMode::kBaseline: return "baseline";
    case SpecMode::kLookup: return "lookup";
    case SpecMode::kDraft: return "draft";
    case SpecMode::kMtp: return "mtp";
    case SpecMode::kAuto: return "auto";
  }
  return "?";
}

SpecMode ResolveAutoMode(bool has_mtp, bool has_draft_model) {
  if (has_mtp) return SpecMode::kMtp;
  if (has_draft_model) return SpecMode::kDraft;
  return SpecMode::kLookup;
}

float LogitMargin(const model::Model& target, std::span<const int32_t> prompt, std::span<const int32_t> prefix,
                  ThreadPool& pool) {
  auto state = target.NewState();
  std::vector<int32_t> all(prompt.begin(), prompt.end());
  all.insert(all.end(), prefix.begin(), prefix.end());
  const PrefillOutput p = Prefill(target, *state, all, false, pool);
  float top1 = -std::numeric_limits<float>::infinity(), top2 = top1;
  for (float v : p.last_logits) {
    if (v > top1) {
      top2 = top1;
      top1 = v;
    } else if (v > top2) {
      top2 = v;
    }
  }
  return top1 - top2;
}

namespace {

std::vector<int32_t> Ids(const DecodeOutput& out) {
  std::vector<int32_t> ids;
  for (const auto& t : out.tokens) ids.push_back(t.token);
  return ids;
}

RaceArm RunArm(const model::Model& target, std::span<const int32_t> prompt, SpecMode mode, const RaceOptions& o,
               ThreadPool& pool) {
  if (mode == SpecMode::kAuto) mode = ResolveAutoMode(target.has_mtp(), o.draft_model != nullptr);
  sampling::SamplingParams params;
  params.temperature = o.temperature;
  params.seed = o.seed;
  sampling::Sampler sampler(params, target.n_vocab(), o.stop_tokens);
  sampling::TokenHistory history(prompt);
  auto state = target.NewState();
  DecodeOptions d;
  d.max_tokens = o.max_tokens;
  d.stop_tokens = o.stop_tokens;
  d.cap = o.cap;

  std::unique_ptr<Drafter> drafter;
  DraftSampling draft_sampling{params, o.seed};
  switch (mode) {
    case SpecMode::kLookup: drafter = std::make_unique<LookupDrafter>(); break;
    case SpecMode::kDraft:
      if (o.draft_model == nullptr) Fail("mode 'draft' needs a draft model (--draft-model)");
      drafter = std::make_unique<DraftModelDrafter>(*o.draft_model, target.n_vocab(), pool, draft_sampling,
                                                    o.draft_options);
      break;
    case SpecMode::kMtp:
      if (!target.has_mtp()) Fail("mode 'mtp' needs a model with an MTP (nextn) head");
      drafter = std::make_unique<MtpDrafter>(target, pool, draft_sampling);
      break;
    default: break;
  }
  std::unique_ptr<CapController> controller;
  if (drafter && o.cap <= 0) {
    VerifyCostCurve curve = o.target_path.empty() ? MeasureVerifyCost(target, pool)
                                                  : CalibratedVerifyCost(target, o.target_path, pool);
    CapControllerOptions co;
    co.max_cap = 16;
    controller = std::make_unique<CapController>(std::move(curve), co);
    d.controller = controller.get();
  }
  const PrefillOutput prefill = Prefill(target, *state, prompt, drafter && drafter->wants_target_hidden(), pool);
  RaceArm arm;
  arm.mode = mode;
  DecodeOutput out = drafter ? DecodeSpeculative(target, *state, prefill.last_logits, prefill.hidden, sampler,
                                                 history, *drafter, d, pool)
                             : DecodePlain(target, *state, prefill.last_logits, sampler, history, d, pool);
  arm.tokens = Ids(out);
  arm.stats = std::move(out.stats);
  return arm;
}

}  // namespace

std::vector<RaceArm> RunRace(const model::Model& target, std::span<const int32_t> prompt, const RaceOptions& options,
                             ThreadPool& pool) {
  std::vector<RaceArm> arms;
  arms.push_back(RunArm(target, prompt, SpecMode::kBaseline, options, pool));
  const std::vector<int32_t> base = arms[0].tokens;  // a copy: arms grows below
  for (SpecMode mode : options.modes) {
    if (mode == SpecMode::kBaseline) continue;
    RaceArm arm = RunArm(target, prompt, mode, options, pool);
    const size_t n = std::max(base.size(), arm.tokens.size());
    for (size_t i = 0; i < n; ++i) {
      const int32_t b = i < base.size() ? base[i] : -1;
      const int32_t a = i < arm.tokens.size() ? arm.tokens[i] : -1;
      if (a == b) continue;
      arm.identical = false;
      arm.divergence = static_cast<int64_t>(i);
      arm.baseline_token = b;
      arm.arm_token = a;
      arm.margin = LogitMargin(target, prompt, std::span<const int32_t>(base.data(), std::min(i, base.size())), pool);
      break;
    }
    arms.push_back(std::move(arm));
  }
  return arms;
}

}  // namespace cairn::spec
