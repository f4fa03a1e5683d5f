// Draft cap selection (mlx-dspark-spec.md §4.7, simplified).
//
// Prior model (BestCap, ModelledRate). With per-token acceptance a (each
// draft accepted independently with probability a, until the first
// rejection) a round with cap k commits
//   E[committed](a, k) = 1 + a + ... + a^k = (1 - a^{k+1}) / (1 - a)
// tokens and takes verify(k + 1) + k * draft_cost seconds, so the rate is
//   rate(k) = E[committed](a, k) / (verify(k + 1) + k * draft_cost);
// cap 0 is plain decoding at 1 / verify(1). verify(w) is measured once per
// model on this machine (MeasureVerifyCost) and cached in memory and on disk.
//
// Live model (CapController). Real drafters break both assumptions: a draft
// model stops by itself at an unsure draft (so a cap is only an upper bound
// on the drafts verified), and acceptance is bursty (confident drafts are
// accepted far more often than unsure ones). Measured on the 1.5B/0.5B
// Qwen2.5-Coder pair: per-token acceptance 0.77, and the independent model
// picks cap 1-2 (1.20x of plain decoding) where cap 6 gives 1.35x. So the
// controller keeps, per draft position i, EMAs over the rounds whose cap
// reached i of
//   proposed_i = P(the drafter proposed >= i drafts),
//   accepted_i = P(>= i drafts were accepted),
// and models a round with cap k as committing 1 + sum_{i<=k} accepted_i tokens
// with n = sum_{i<=k} proposed_i drafts, taking verify(1 + n) + n * draft_cost
// seconds. Positions never observed extrapolate from the last observed one
// (accepted falls by the per-token acceptance EMA, proposed stays).
// Every kExploreEvery rounds the cap is raised by kExploreStep for one round
// so that positions past the current cap keep being measured. The cap is
// re-picked every kRepickRounds rounds. When the best cap is 0 (speculation
// slower than plain decoding) the controller parks at 0 and runs a cap-2
// probe every kProbeEvery rounds so it can come back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/model.h"

namespace cairn::spec {

// Seconds of one target forward by width (rows), measured at a small depth.
struct VerifyCostCurve {
  std::vector<double> seconds;  // seconds[w - 1] for width w = 1..max_width()
  int max_width() const { return static_cast<int>(seconds.size()); }
  // Linear extrapolation past max_width from the last two points.
  double At(int width) const;
  bool empty() const { return seconds.empty(); }
};

// Times Forward over widths 1..max_width (all_logits, as a verify runs it) at
// a context of `depth` tokens; minimum of `iterations` runs per width (load
// from other processes only adds time).
VerifyCostCurve MeasureVerifyCost(const model::Model& model, ThreadPool& pool, int max_width = 16, int depth = 32,
                                  int iterations = 3);

// MeasureVerifyCost, cached per process and in
// $XDG_CACHE_HOME/cairn/spec-calibration.json (else ~/.cache/cairn/...),
// keyed by model path, file size, mtime, max width, iterations and thread
// count. `use_disk` false skips the file.
VerifyCostCurve CalibratedVerifyCost(const model::Model& model, const std::string& model_path, ThreadPool& pool,
                                     bool use_disk = true, int max_width = 16, int iterations = 3);

// (1 - a^{k+1}) / (1 - a); k + 1 when a == 1.
double ExpectedCommitted(double acceptance, int cap);

// The cap in [0, max_cap] that maximises the modelled rate; 0 = plain decoding.
// draft_cost: seconds per drafted token (0 for lookup).
int BestCap(const VerifyCostCurve& curve, double acceptance, double draft_cost, int max_cap);
double ModelledRate(const VerifyCostCurve& curve, double acceptance, double draft_cost, int cap);

struct CapControllerOptions {
  int max_cap = 16;
  double prior_acceptance = 0.6;
  double alpha = 0.05;        // EMA weight of one Bernoulli observation
  double draft_cost = 0.0;    // seconds per drafted token
  int fixed_cap = -1;         // >= 0: always this cap (no adaptation)
  // Learn the draft cost and the verify times from measured (wall-clock)
  // time. Off for seeded sampling: the cap schedule decides how random
  // numbers are consumed, so it must not depend on timing.
  bool measure_draft_cost = true;
};

class CapController {
 public:
  static constexpr int kRepickRounds = 4;
  static constexpr int kProbeEvery = 8;

  static constexpr int kExploreEvery = 8;
  static constexpr int kExploreStep = 2;

  CapController(VerifyCostCurve curve, CapControllerOptions options);

  // Cap for the next round.
  int NextCap();
  // Outcome of a round that verified `drafted` drafts and accepted `accepted`.
  void Observe(int drafted, int accepted);
  // Measured drafting time of a round that produced `drafted` tokens: the
  // per-token draft cost becomes an EMA of the measurements (the configured
  // draft_cost is only the prior).
  void ObserveDraftCost(double seconds, int drafted);
  double draft_cost() const { return options_.draft_cost; }
  // Measured time of a target pass of `width` rows. The calibrated curve is
  // a prior measured once (possibly in a busier or quieter moment, and kept
  // on disk): each width's estimate becomes an EMA of its own measurements,
  // and widths not measured yet scale the curve by the EMA of measured /
  // calibrated over all widths.
  void ObserveVerifyCost(double seconds, int width);
  // The live estimate of verify(width) in seconds.
  double VerifySeconds(int width) const;

  // Per-token acceptance EMA (every verified draft one Bernoulli observation).
  double acceptance() const { return acceptance_; }
  int current_cap() const { return cap_; }
  const VerifyCostCurve& curve() const { return curve_; }

  // The live model's rate (tokens per second) at cap k, and its best over
  // caps 0..max_cap.
  double ModelledRate(int cap) const;
  double ModelledBestRate() const;

 private:
  struct Position {
    double proposed = 1.0;  // P(>= i drafts proposed | cap >= i)
    double accepted = 0.0;  // P(>= i drafts accepted | cap >= i)
    int64_t observations = 0;
  };
  // Position i (1-based) with unobserved positions extrapolated.
  std::vector<Position> Estimates() const;
  // ModelledRate over estimates computed once by the caller.
  double ModelledRate(const std::vector<Position>& est, int cap) const;
  int PickCap() const;

  VerifyCostCurve curve_;
  CapControllerOptions options_;
  double acceptance_;
  std::vector<Position> positions_;  // [max_cap]
  struct WidthCost {
    double seconds = 0.0;
    int64_t observations = 0;
  };
  std::vector<WidthCost> verify_;    // [width - 1], widths 1..max_cap + 1
  double curve_scale_ = 1.0;         // EMA of measured / curve.At(width)
  int64_t verify_observations_ = 0;
  int cap_ = 0;
  int round_cap_ = 0;                // the cap NextCap handed out last
  int rounds_ = 0;
  int parked_rounds_ = 0;
  int explore_rounds_ = 0;
  bool draft_cost_observed_ = false;
};

}  // namespace cairn::spec
