// Hybrid (qwen35) parity at real shapes: Cairn against transformers and
// llama.cpp on random-initialised files (issue #20, docs/hybrid-parity.md).
//
// The models are rebuilt here bit for bit as tools/random_gguf.py writes them
// (tests/model/parity_weights.h); the goldens in tests/model/golden/qwen35-parity-*
// come from transformers running the dequantized weights
// (tools/golden_from_gguf.py --layer-states) and, for the Q8_0 files, from
// llama.cpp's logits (top-5 per prompt, produced by hand: see the README there).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <ostream>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/test_paths.h"
#include "model/golden_reader.h"
#include "model/model.h"
#include "model/parity_weights.h"

namespace cairn::model {
namespace {

// Investigation hook (docs/hybrid-parity.md): with CAIRN_PARITY_GGUF=model.gguf,
// CAIRN_PARITY_IDS=1,2,3 and CAIRN_PARITY_OUT=dir, dumps every layer's residual
// stream (layer-K.f32, [n][n_embd]) and the logits (logits.f32, [n][n_vocab]) of
// one whole-prompt forward as raw float32.
TEST(HybridParityDump, DumpLayersOfExternalFile) {
  const char* path = std::getenv("CAIRN_PARITY_GGUF");
  const char* ids_env = std::getenv("CAIRN_PARITY_IDS");
  const char* out_env = std::getenv("CAIRN_PARITY_OUT");
  if (path == nullptr || ids_env == nullptr || out_env == nullptr) GTEST_SKIP() << "diagnostic only";
  std::vector<int32_t> ids;
  std::stringstream ss(ids_env);
  for (std::string tok; std::getline(ss, tok, ',');) ids.push_back(std::stoi(tok));
  auto model = Model::Load(path);
  const std::string out = out_env;
  ThreadPool pool(2);
  auto state = model->NewState();
  ForwardRequest req;
  req.tokens = ids;
  req.all_logits = true;
  req.chunk_tokens = static_cast<int64_t>(ids.size());
  const int64_t E = model->config().n_embd;
  req.on_layer = [&](int layer, int64_t, int64_t n, const float* x) {
    FILE* f = std::fopen((out + "/layer-" + std::to_string(layer) + ".f32").c_str(), "wb");
    std::fwrite(x, sizeof(float), static_cast<size_t>(n * E), f);
    std::fclose(f);
  };
  ForwardResult res;
  model->Forward(*state, req, &res, pool);
  FILE* f = std::fopen((out + "/logits.f32").c_str(), "wb");
  std::fwrite(res.logits.data(), sizeof(float), static_cast<size_t>(res.n_rows * model->n_vocab()), f);
  std::fclose(f);
}


constexpr int kVocab = 4096;   // tools/random_gguf.py --vocab default

// The C++ generator must stay in step with tools/random_gguf.py (values printed by
// random_gguf.normal / uniform for seed 1, std 0.02).
TEST(HybridParityWeights, GeneratorMatchesRandomGgufPy) {
  std::vector<float> v(5);
  test::ParityFill("blk.0.attn_qkv.weight", test::ParityInit::kMatrix, 1, 0.02, &v);
  const float want[5] = {-0x1.cd40f8p-6f, -0x1.eecb82p-7f, -0x1.f7def4p-7f, -0x1.1fefa6p-11f, 0x1.30217cp-6f};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(v[i], want[i]) << i;
  std::vector<float> a(3);
  test::ParityFill("blk.0.ssm_a", test::ParityInit::kA, 1, 0.02, &a);
  EXPECT_FLOAT_EQ(a[0], -2.1896133f);
  EXPECT_FLOAT_EQ(a[1], -15.5331955f);
  EXPECT_FLOAT_EQ(a[2], -6.612526f);
}

struct ParityCase {
  const char* dir;     // tests/model/golden/<dir>
  const char* shape;   // tools/random_gguf.py --shape
  int layers;
};

// Names the case in test listings (instead of its bytes).
void PrintTo(const ParityCase& pc, std::ostream* os) { *os << pc.dir; }

std::string GoldenDir(const ParityCase& pc) { return test::SourceDir() + "/tests/model/golden/" + pc.dir; }

std::vector<double> LogSoftmax(const float* x, int64_t n) {
  double mx = x[0];
  for (int64_t i = 1; i < n; ++i) mx = std::max(mx, static_cast<double>(x[i]));
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - mx);
  const double lse = mx + std::log(sum);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] - lse;
  return out;
}

// One whole-prompt forward: logits of every row and each layer's residual at the last position.
struct ParityRun {
  ForwardResult res;
  std::vector<std::vector<float>> layer_last;   // [n_layers][n_embd]
};

ParityRun Forward(Model& model, const std::vector<int32_t>& ids) {
  ParityRun run;
  const int64_t E = model.config().n_embd;
  const int64_t L = static_cast<int64_t>(ids.size());
  run.layer_last.assign(model.config().n_layers, std::vector<float>(E));
  ThreadPool pool(2);
  auto state = model.NewState();
  ForwardRequest req;
  req.tokens = ids;
  req.all_logits = true;
  req.on_layer = [&](int layer, int64_t p0, int64_t n, const float* x) {
    if (p0 + n == L) std::copy(x + (n - 1) * E, x + n * E, run.layer_last[layer].begin());
  };
  model.Forward(*state, req, &run.res, pool);
  return run;
}

double MaxAbs(const float* a, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, static_cast<double>(std::fabs(a[i])));
  return m;
}

class HybridParityTest : public testing::TestWithParam<ParityCase> {};

// F32 weights: Cairn against transformers, layer by layer and at the logits.
// Measured (docs/hybrid-parity.md): GDN layers ~1e-6 relative, gated attention
// layers ~1.2e-4 (Cairn keeps K/V in F16), logits <= 2e-4 relative.
TEST_P(HybridParityTest, F32MatchesTransformersLayerByLayer) {
  const ParityCase pc = GetParam();
  const test::ParityShape shape = test::ParityShapeNamed(pc.shape, pc.layers);
  auto model = Model::Load(test::ParityModelPath(shape, kVocab, DType::kF32));
  ASSERT_EQ(model->n_vocab(), kVocab);
  ASSERT_EQ(model->config().n_layers, pc.layers);
  const test::GoldenFile golden(GoldenDir(pc), "golden.json");
  const std::vector<int32_t> columns = golden.Array<int32_t>("columns");
  const int64_t E = model->config().n_embd;
  for (const auto& prompt : golden.meta().at("prompts")) {
    const std::string p = prompt.at("name").get<std::string>();
    const std::vector<int32_t> ids = golden.Array<int32_t>(p + ".ids");
    const int64_t L = static_cast<int64_t>(ids.size());
    const ParityRun run = Forward(*model, ids);
    // Every layer's residual stream at the last position.
    const std::vector<float> want_layers = golden.Array<float>(p + ".layer_last");
    ASSERT_EQ(static_cast<int64_t>(want_layers.size()), pc.layers * E);
    std::string per_layer;
    for (int layer = 0; layer < pc.layers; ++layer) {
      const float* want = want_layers.data() + layer * E;
      double diff = 0;
      for (int64_t e = 0; e < E; ++e) diff = std::max(diff, static_cast<double>(std::fabs(run.layer_last[layer][e] - want[e])));
      const double rel = diff / MaxAbs(want, static_cast<size_t>(E));
      char buf[16];
      std::snprintf(buf, sizeof buf, " %.1e", rel);
      per_layer += buf;
      EXPECT_LE(rel, 1e-3) << p << " layer " << layer;
    }
    // Logits: the whole last row, and the tracked columns of every row.
    const std::vector<float> want_last = golden.Array<float>(p + ".last_logits");
    const float* got_last = run.res.logits.data() + (L - 1) * kVocab;
    const double scale = MaxAbs(want_last.data(), want_last.size());
    double last_diff = 0;
    for (int v = 0; v < kVocab; ++v) last_diff = std::max(last_diff, static_cast<double>(std::fabs(got_last[v] - want_last[v])));
    const std::vector<float> want_cols = golden.Array<float>(p + ".cols_logits");
    double cols_diff = 0;
    for (int64_t i = 0; i < L; ++i) {
      for (size_t c = 0; c < columns.size(); ++c) {
        const double d = std::fabs(run.res.logits[i * kVocab + columns[c]] - want_cols[i * columns.size() + c]);
        cols_diff = std::max(cols_diff, d);
      }
    }
    EXPECT_LE(last_diff, 1e-3 * scale) << p;
    EXPECT_LE(cols_diff, 1e-3 * scale) << p;
    // The first-token distribution (what issue #20 compared): top-5 log-probabilities.
    const std::vector<double> lp = LogSoftmax(got_last, kVocab);
    const std::vector<int32_t> top_ids = golden.Array<int32_t>(p + ".top5_ids");
    const std::vector<float> top_lp = golden.Array<float>(p + ".top5_logprobs");
    double top_diff = 0;
    for (size_t k = 0; k < top_ids.size(); ++k) top_diff = std::max(top_diff, std::fabs(lp[top_ids[k]] - top_lp[k]));
    EXPECT_LE(top_diff, 1e-3) << p;
    std::printf("  %s %s L=%lld: layer rel max:%s | logits rel %.2e (cols %.2e) | top-5 logprob %.1e\n", pc.dir,
                p.c_str(), static_cast<long long>(L), per_layer.c_str(), last_diff / scale, cols_diff / scale, top_diff);
  }
}

// Q8_0 weights: Cairn's first-token top-5 against llama.cpp's on the same file
// (tests/model/golden/<dir>/llama-cpp-top5-q8_0.json, produced by hand). Both
// engines quantize activations to 8 bits per 32-block; any difference of the
// order of float rounding flips some of those roundings, so two correct engines
// differ by quantization noise, which grows with depth and prompt length
// (docs/hybrid-parity.md: here up to 0.042 nat for L <= 64 on every SIMD target
// of this CPU, 0.047 for L = 300 on AVX2; llama.cpp against itself with flash
// attention on/off, up to 0.011).
TEST_P(HybridParityTest, Q8_0Top5MatchesLlamaCpp) {
  const ParityCase pc = GetParam();
  const test::ParityShape shape = test::ParityShapeNamed(pc.shape, pc.layers);
  auto model = Model::Load(test::ParityModelPath(shape, kVocab, DType::kQ8_0));
  std::ifstream in(GoldenDir(pc) + "/llama-cpp-top5-q8_0.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json doc = nlohmann::json::parse(in);
  for (const auto& prompt : doc.at("prompts")) {
    const std::vector<int32_t> ids = prompt.at("ids").get<std::vector<int32_t>>();
    const ParityRun run = Forward(*model, ids);
    const int64_t L = static_cast<int64_t>(ids.size());
    const std::vector<double> lp = LogSoftmax(run.res.logits.data() + (L - 1) * kVocab, kVocab);
    const std::vector<int32_t> want_ids = prompt.at("top5_ids").get<std::vector<int32_t>>();
    const std::vector<double> want_lp = prompt.at("top5_logprobs").get<std::vector<double>>();
    double diff = 0;
    for (size_t k = 0; k < want_ids.size(); ++k) diff = std::max(diff, std::fabs(lp[want_ids[k]] - want_lp[k]));
    // The first-token case (short prompts): 0.05 nat. The 300-token prompt
    // (two chunks) is noisier: up to 0.047 measured on AVX2, so 0.1.
    EXPECT_LE(diff, L <= 64 ? 0.05 : 0.1) << pc.dir << " " << prompt.at("name");
    // Same greedy token wherever llama.cpp's top-2 gap exceeds the tolerance.
    const int32_t got_top = static_cast<int32_t>(std::max_element(lp.begin(), lp.end()) - lp.begin());
    if (want_lp[0] - want_lp[1] > 0.1) EXPECT_EQ(got_top, want_ids[0]) << pc.dir << " " << prompt.at("name");
    std::printf("  %s %s L=%lld: top-5 max |logprob - llama.cpp| %.4f, top-1 %d (llama.cpp %d)\n", pc.dir,
                prompt.at("name").get<std::string>().c_str(), static_cast<long long>(L), diff, got_top, want_ids[0]);
  }
}

// Q8_0 weights against transformers running the dequantized weights (float
// activations): the distance is Cairn's activation-quantization noise alone
// (relative RMS 2-3%; a wiring error gives ~100%).
TEST_P(HybridParityTest, Q8_0WithinQuantizationNoiseOfTransformers) {
  const ParityCase pc = GetParam();
  const test::ParityShape shape = test::ParityShapeNamed(pc.shape, pc.layers);
  auto model = Model::Load(test::ParityModelPath(shape, kVocab, DType::kQ8_0));
  const test::GoldenFile golden(GoldenDir(pc), "golden-q8_0.json");
  const int64_t E = model->config().n_embd;
  for (const auto& prompt : golden.meta().at("prompts")) {
    const std::string p = prompt.at("name").get<std::string>();
    const std::vector<int32_t> ids = golden.Array<int32_t>(p + ".ids");
    const int64_t L = static_cast<int64_t>(ids.size());
    const ParityRun run = Forward(*model, ids);
    const std::vector<float> want_layers = golden.Array<float>(p + ".layer_last");
    const std::vector<float> want_last = golden.Array<float>(p + ".last_logits");
    auto rel_rms = [](const float* got, const float* want, int64_t n) {
      double d2 = 0, w2 = 0;
      for (int64_t i = 0; i < n; ++i) {
        d2 += (got[i] - want[i]) * static_cast<double>(got[i] - want[i]);
        w2 += want[i] * static_cast<double>(want[i]);
      }
      return std::sqrt(d2 / std::max(w2, 1e-30));
    };
    double worst_layer = 0;
    for (int layer = 0; layer < pc.layers; ++layer) {
      worst_layer = std::max(worst_layer, rel_rms(run.layer_last[layer].data(), want_layers.data() + layer * E, E));
    }
    const double logits = rel_rms(run.res.logits.data() + (L - 1) * kVocab, want_last.data(), kVocab);
    EXPECT_LE(worst_layer, 0.06) << p;   // measured 2.1e-2 .. 3.1e-2
    EXPECT_LE(logits, 0.06) << p;
    std::printf("  %s %s L=%lld: relative RMS vs transformers: layers <= %.2e, logits %.2e\n", pc.dir, p.c_str(),
                static_cast<long long>(L), worst_layer, logits);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, HybridParityTest,
                         testing::Values(ParityCase{"qwen35-parity-0.8b", "0.8b", 4},
                                         ParityCase{"qwen35-parity-nv2", "tiny-nv2", 8}),
                         [](const testing::TestParamInfo<ParityCase>& info) {
                           return std::string(info.param.layers == 4 ? "Qwen35_0_8bShape4Layers" : "TinyNv2");
                         });

}  // namespace
}  // namespace cairn::model
