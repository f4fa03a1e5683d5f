// Cap selection: cost model, controller adaptation, calibration cache.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "spec/cap_controller.h"
#include "spec_test_util.h"

namespace cairn::spec {
namespace {

// verify(w) = 1 + 0.05 (w - 1): wide verifies are cheap (a CPU decode is
// bandwidth bound).
VerifyCostCurve CheapCurve() {
  VerifyCostCurve c;
  for (int w = 1; w <= 16; ++w) c.seconds.push_back(1.0 + 0.05 * (w - 1));
  return c;
}

// verify(w) = w: no batching gain at all.
VerifyCostCurve LinearCurve() {
  VerifyCostCurve c;
  for (int w = 1; w <= 16; ++w) c.seconds.push_back(static_cast<double>(w));
  return c;
}

TEST(CapModel, ExpectedCommittedIsTheGeometricSum) {
  EXPECT_DOUBLE_EQ(ExpectedCommitted(0.0, 5), 1.0);
  EXPECT_DOUBLE_EQ(ExpectedCommitted(1.0, 5), 6.0);
  EXPECT_NEAR(ExpectedCommitted(0.5, 2), 1.75, 1e-12);
}

TEST(CapModel, BestCapGrowsWithAcceptanceAndIsZeroWhenSpeculationLoses) {
  const VerifyCostCurve cheap = CheapCurve();
  const int low = BestCap(cheap, 0.3, 0.0, 16);
  const int high = BestCap(cheap, 0.9, 0.0, 16);
  EXPECT_GE(low, 1);
  EXPECT_GT(high, low);
  EXPECT_GE(BestCap(cheap, 0.999, 0.0, 16), 12);
  // No batching gain: any rejection makes speculation slower than plain.
  EXPECT_EQ(BestCap(LinearCurve(), 0.8, 0.0, 16), 0);
  // An expensive drafter also parks.
  EXPECT_EQ(BestCap(cheap, 0.5, 2.0, 16), 0);
}

TEST(CapModel, CurveExtrapolatesLinearly) {
  VerifyCostCurve c;
  c.seconds = {1.0, 1.5, 2.0};
  EXPECT_DOUBLE_EQ(c.At(3), 2.0);
  EXPECT_DOUBLE_EQ(c.At(5), 3.0);
}

TEST(CapController, AdaptsToLiveAcceptanceAndProbesWhileParked) {
  CapControllerOptions o;
  o.prior_acceptance = 0.6;
  CapController c(CheapCurve(), o);
  const int start = c.NextCap();
  EXPECT_GT(start, 0);
  for (int i = 0; i < 200; ++i) c.Observe(c.current_cap() > 0 ? c.current_cap() : 1, c.current_cap());  // all accepted
  EXPECT_GT(c.acceptance(), 0.95);
  EXPECT_GT(c.current_cap(), start);

  CapController slow(LinearCurve(), o);
  EXPECT_EQ(slow.current_cap(), 0);
  int probes = 0;
  for (int i = 0; i < 64; ++i) probes += slow.NextCap() > 0;
  EXPECT_EQ(probes, 64 / CapController::kProbeEvery);
}

// verify(w) = 14.7 + 2.4 (w - 1) ms: the 1.5B Qwen2.5-Coder target on 2 cores.
VerifyCostCurve RealCurve(double scale = 1.0) {
  VerifyCostCurve c;
  for (int w = 1; w <= 17; ++w) c.seconds.push_back(scale * (14.7 + 2.4 * (w - 1)) * 1e-3);
  return c;
}

// A draft model's rounds are bursty: 2 rounds in 5 the drafter is sure and
// every draft up to the cap is accepted; otherwise it stops after one
// unsure draft, which is rejected. Per-token acceptance is then 0.8, and the
// independent-acceptance model prefers cap 1-2 (5 ms per draft); but a round
// at cap 6 commits 3.4 tokens for 3.0 drafts, faster than any short cap.
TEST(CapController, BurstyDraftsGrowTheCapPastTheIndependentModel) {
  CapControllerOptions o;
  o.prior_acceptance = 0.6;
  o.draft_cost = 5e-3;
  o.max_cap = 8;
  o.measure_draft_cost = false;
  CapController c(RealCurve(), o);
  for (int r = 0; r < 400; ++r) {
    const int cap = c.NextCap();
    if (cap == 0) continue;
    if (r % 5 < 2) {
      c.Observe(cap, cap);
    } else {
      c.Observe(1, 0);
    }
  }
  EXPECT_GE(c.current_cap(), 6);
  EXPECT_LE(BestCap(RealCurve(), c.acceptance(), o.draft_cost, o.max_cap), 2) << "acceptance " << c.acceptance();
  EXPECT_GT(c.ModelledRate(c.current_cap()), c.ModelledRate(2) * 1.1);
}

// A calibration kept on disk from a busy moment (10x too slow) is corrected
// by measured verify times: measured widths take their own, the others scale.
TEST(CapController, MeasuredVerifyTimesReplaceAStaleCalibration) {
  CapControllerOptions o;
  o.draft_cost = 5e-3;
  CapController c(RealCurve(10.0), o);
  const VerifyCostCurve truth = RealCurve();
  for (int i = 0; i < 100; ++i) {
    for (int w = 1; w <= 4; ++w) c.ObserveVerifyCost(truth.At(w), w);
  }
  for (int w = 1; w <= 4; ++w) EXPECT_NEAR(c.VerifySeconds(w), truth.At(w), 1e-9) << w;
  EXPECT_NEAR(c.VerifySeconds(12) / truth.At(12), 1.0, 0.05);  // the curve x ~0.1

  o.measure_draft_cost = false;  // seeded sampling: no timing input at all
  CapController fixed(RealCurve(10.0), o);
  fixed.ObserveVerifyCost(truth.At(2), 2);
  EXPECT_DOUBLE_EQ(fixed.VerifySeconds(2), RealCurve(10.0).At(2));
}

TEST(CapController, FixedCapNeverChanges) {
  CapControllerOptions o;
  o.fixed_cap = 3;
  CapController c(LinearCurve(), o);
  for (int i = 0; i < 10; ++i) c.Observe(3, 0);
  EXPECT_EQ(c.NextCap(), 3);
}

TEST(CapCalibration, MeasuresEveryWidthAndCachesOnDisk) {
  const model::Model& m = test::TinyModel("qwen3");
  const std::string dir = test::TempDir() + "/xdg";
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  const std::string path = (std::filesystem::temp_directory_path() / "cairn-spec-test-models/qwen3-1.gguf").string();
  const VerifyCostCurve a = CalibratedVerifyCost(m, path, test::Pool(), true, /*max_width=*/4, /*iterations=*/1);
  ASSERT_EQ(a.max_width(), 4);
  for (double s : a.seconds) EXPECT_GT(s, 0.0);
  EXPECT_TRUE(std::filesystem::exists(dir + "/cairn/spec-calibration.json"));
  const VerifyCostCurve b = CalibratedVerifyCost(m, path, test::Pool(), true, 4, 1);  // memory hit
  EXPECT_EQ(a.seconds, b.seconds);
}

}  // namespace
}  // namespace cairn::spec
