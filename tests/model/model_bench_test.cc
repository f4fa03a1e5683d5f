// `cairn bench` library on a tiny model: the phases it reports, the bytes a
// decode step reads, and the paired bandwidth measurement (one probe pass
// before each paired step and one after the last).
#include <cmath>
#include <memory>

#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "model/bench/memory_probe.h"
#include "model/bench/model_bench.h"
#include "model/model.h"
#include "test_models.h"

namespace cairn::model::bench {
namespace {

TEST(ModelBenchTest, PairedStepsAreMeasuredAgainstTheirOwnProbePasses) {
  for (const char* arch : {"qwen3", "qwen35"})
  for (const bool k_q8 : {false, true}) {   // --depth-fill copy replicates Q8_0 K regions too
    std::unique_ptr<Model> m = Model::Load(test::TinyModelPath(arch));
    ThreadPool pool(2);
    BandwidthProbe probe(pool, size_t{16} << 20);
    EXPECT_EQ(probe.bytes(), size_t{16} << 20);
    const double gbps = probe.PassGbps();
    EXPECT_TRUE(std::isfinite(gbps) && gbps > 0.0) << gbps;

    BenchOptions options;
    options.prompt_tokens = {0};
    options.depths = {0, 100};
    options.decode_tokens = 3;
    options.depth_fill = DepthFill::kCopy;
    options.fill_prompt_tokens = 64;
    options.paired_steps = 4;
    options.k_q8 = k_q8;
    options.probe = &probe;
    const BenchResult result = RunModelBench(*m, options, pool);
    ASSERT_EQ(result.decode.size(), 2u) << arch;
    const DecodeBytes bytes = CountDecodeBytes(*m, k_q8);
    for (const DecodeResult& d : result.decode) {
      EXPECT_EQ(d.bytes_per_token, bytes.Total(d.depth));
      EXPECT_EQ(d.timing.tokens, 3);
      ASSERT_EQ(d.paired_of_ceiling.size(), 4u) << arch << " depth " << d.depth;
      for (double r : d.paired_of_ceiling) EXPECT_TRUE(std::isfinite(r) && r > 0.0) << r;
    }
    EXPECT_EQ(result.decode[1].prefilled, 64);

    options.probe = nullptr;   // no probe: no paired steps
    const BenchResult plain = RunModelBench(*m, options, pool);
    for (const DecodeResult& d : plain.decode) EXPECT_TRUE(d.paired_of_ceiling.empty());
  }
}

}  // namespace
}  // namespace cairn::model::bench
