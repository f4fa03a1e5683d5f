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
