// SpecRunner's choice of mode: availability errors, the modelled choice, and
// the fallback to baseline when a mode measures slower than plain decoding.
#include "engine/spec_runner.h"

#include <gtest/gtest.h>

#include <memory>

#include "core/error.h"
#include "model/test_models.h"

namespace cairn::engine {
namespace {

TEST(SpecRunner, AutoFallsBackToBaselineWhenSpeculationMeasuresSlowerAndRetriesLater) {
  const std::string path = test::TinyModelPath("qwen35", DType::kF32, /*mtp=*/true);
  const std::unique_ptr<model::Model> target = model::Model::Load(path);
  ThreadPool pool(1);
  SpecRunner runner(*target, path, nullptr, "", pool, "auto", /*max_cap=*/4);
  EXPECT_THROW(runner.Resolve("draft"), RequestError);
  EXPECT_EQ(runner.Resolve("mtp").mode, spec::SpecMode::kMtp);
  EXPECT_EQ(runner.Resolve("baseline").mode, spec::SpecMode::kBaseline);

  // Make every speculative mode measure far slower than any plain decode.
  spec::SpecStats slow;
  slow.committed = 64;
  slow.seconds = 1e4;
  for (spec::SpecMode m : {spec::SpecMode::kMtp, spec::SpecMode::kLookup}) {
    SpecChoice c;
    c.mode = m;
    runner.RecordOutcome(c, slow);
  }
  const SpecChoice fallback = runner.Resolve("auto");
  EXPECT_EQ(fallback.mode, spec::SpecMode::kBaseline);
  EXPECT_EQ(fallback.requested, "auto");
  // Too short a decode is not a measurement.
  spec::SpecStats short_run;
  short_run.committed = 3;
  short_run.seconds = 1e-6;
  SpecChoice mtp;
  mtp.mode = spec::SpecMode::kMtp;
  runner.RecordOutcome(mtp, short_run);
  EXPECT_EQ(runner.Resolve("auto").mode, spec::SpecMode::kBaseline);
  // Measurements expire: auto then goes by the model again.
  spec::SpecMode later = spec::SpecMode::kBaseline;
  for (int i = 0; i < 25; ++i) later = runner.Resolve("auto").mode;
  const spec::SpecMode modelled = SpecRunner(*target, path, nullptr, "", pool, "auto", 4).Resolve("auto").mode;
  EXPECT_EQ(later, modelled);
  // Seeded sampling never depends on measurements: static preference.
  EXPECT_EQ(runner.Resolve("auto", /*reproducible=*/true).mode, spec::SpecMode::kMtp);
}

TEST(SpecRunner, DefaultModeNeedsWhatItNames) {
  const std::string path = test::TinyModelPath("qwen3", DType::kF32);
  const std::unique_ptr<model::Model> target = model::Model::Load(path);
  ThreadPool pool(1);
  EXPECT_THROW(SpecRunner(*target, path, nullptr, "", pool, "mtp"), cairn::Error);
  EXPECT_THROW(SpecRunner(*target, path, nullptr, "", pool, "draft"), cairn::Error);
  EXPECT_THROW(SpecRunner(*target, path, nullptr, "", pool, "warp"), cairn::Error);
  EXPECT_THROW(SpecRunner(*target, path, nullptr, "", pool, "auto", 0), cairn::Error);
  EXPECT_NO_THROW(SpecRunner(*target, path, nullptr, "", pool, "lookup"));
}

}  // namespace
}  // namespace cairn::engine
