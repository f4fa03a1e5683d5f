// Cairn's forward pass against Hugging Face transformers (golden logits made
// by tools/make_reference_models.py; see tests/model/golden/README.md).
//
// F32 path: the HF checkpoint is converted by Cairn's own converter and run
// with F32 weights. Tolerance: max |Δlogit| <= 2e-3 · max|logit| over the full
// last-row logits and the tracked columns of every row. The HF run keeps K/V
// in F32 while Cairn stores them as F16 (round-to-nearest, relative error
// 2^-11 ≈ 4.9e-4 per element); through softmax-weighted sums that bounds the
// attention output error near 1e-3 relative, which dominates everything else
// (matmul reordering is ~1e-6). Argmax must agree wherever HF's top-2 gap
// exceeds that tolerance.
//
// Q8_0 path: the tools' reference GGUF (llama.cpp naming, Q8_0 matrices) run
// by Cairn vs HF running the dequantized weights. Cairn also quantizes
// activations to 8 bits per 32-block (as llama.cpp does): each product then
// carries ~0.5% relative noise, which these random tiny models (unit gain per
// layer, recurrent feedback in the GDN layers) amplify to 1.5-6% relative RMS
// of the logits (measured: 1.5e-2 at L=1 up to 4.7e-2 at L=64). Tolerance:
// relative RMS <= 8% — a wiring error (wrong head order, missing transform)
// gives ~100% — and argmax agreement where the top-2 gap exceeds 25% of the
// logit std. The quantized kernels themselves are checked bit-exactly against
// a scalar reference in tests/kernels/matmul_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "common/test_paths.h"
#include "model/convert/hf_convert.h"
#include "model/golden_reader.h"
#include "model/model.h"

namespace cairn::model {
namespace {

std::string GoldenDir(const std::string& name) { return test::SourceDir() + "/tests/model/golden/" + name; }

std::string ConvertF32(const std::string& name) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("cairn-golden-" + name + "-" + std::to_string(getpid()) + ".gguf"))
          .string();
  ConvertOptions options;
  options.matrix_type = DType::kF32;
  ConvertHfToGguf(GoldenDir(name), out, options);
  return out;
}

struct Errors {
  double max_abs = 0;
  double max_ref = 0;
  double sum_sq = 0;
  double ref_sq = 0;
  void Add(double got, double want) {
    max_abs = std::max(max_abs, std::fabs(got - want));
    max_ref = std::max(max_ref, std::fabs(want));
    sum_sq += (got - want) * (got - want);
    ref_sq += want * want;
  }
  double rel_max() const { return max_abs / std::max(1e-12, max_ref); }
  double rel_rms() const { return std::sqrt(sum_sq / std::max(1e-30, ref_sq)); }
};

void CompareModel(const std::string& model_path, const test::GoldenFile& golden, bool quantized) {
  auto model = Model::Load(model_path);
  const int V = golden.meta().at("vocab_size").get<int>();
  ASSERT_EQ(model->n_vocab(), V);
  const std::vector<int32_t> columns = golden.Array<int32_t>("columns");
  ThreadPool pool(2);
  const bool sanitized = std::getenv("CAIRN_SANITIZED") != nullptr;
  for (const auto& prompt : golden.meta().at("prompts")) {
    const std::string p = prompt.at("name").get<std::string>();
    const int64_t L = prompt.at("length").get<int64_t>();
    if (sanitized && L > 300) continue;
    const std::vector<int32_t> ids = golden.Array<int32_t>(p + ".ids");
    auto state = model->NewState();
    ForwardRequest req;
    req.tokens = ids;
    req.all_logits = true;
    req.want_hidden = true;
    ForwardResult res;
    model->Forward(*state, req, &res, pool);
    ASSERT_EQ(res.n_rows, L);

    Errors last, cols, hidden;
    const std::vector<float> want_last = golden.Array<float>(p + ".last_logits");
    const float* got_last = res.logits.data() + (L - 1) * V;
    for (int v = 0; v < V; ++v) last.Add(got_last[v], want_last[v]);
    const std::vector<float> want_cols = golden.Array<float>(p + ".cols_logits");
    const std::vector<int32_t> want_argmax = golden.Array<int32_t>(p + ".argmax");
    const std::vector<float> gaps = golden.Array<float>(p + ".top2_gap");
    int argmax_checked = 0;
    for (int64_t i = 0; i < L; ++i) {
      const float* row = res.logits.data() + i * V;
      for (size_t c = 0; c < columns.size(); ++c) cols.Add(row[columns[c]], want_cols[i * columns.size() + c]);
      const float gap_needed = quantized ? 0.25f * prompt.at("last_logits_std").get<float>() : 2e-3f * 10.0f;
      if (gaps[i] > gap_needed) {
        const int32_t got = static_cast<int32_t>(std::max_element(row, row + V) - row);
        EXPECT_EQ(got, want_argmax[i]) << p << " row " << i << " gap " << gaps[i];
        ++argmax_checked;
      }
    }
    const std::vector<float> want_hidden = golden.Array<float>(p + ".last_hidden");
    const int64_t E = static_cast<int64_t>(want_hidden.size());
    for (int64_t e = 0; e < E; ++e) hidden.Add(res.hidden[(L - 1) * E + e], want_hidden[e]);
    std::printf("  %s L=%lld: last rel_max %.2e rel_rms %.2e | cols rel_max %.2e | hidden rel_max %.2e | argmax %d\n",
                p.c_str(), static_cast<long long>(L), last.rel_max(), last.rel_rms(), cols.rel_max(),
                hidden.rel_max(), argmax_checked);
    if (quantized) {
      EXPECT_LE(last.rel_rms(), 0.08) << p;
      EXPECT_LE(cols.rel_rms(), 0.08) << p;
    } else {
      EXPECT_LE(last.rel_max(), 2e-3) << p;
      EXPECT_LE(cols.rel_max(), 2e-3) << p;
      EXPECT_LE(hidden.rel_max(), 2e-3) << p;
    }
  }
}

class GoldenTest : public testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, F32MatchesTransformers) {
  const std::string path = ConvertF32(GetParam());
  CompareModel(path, test::GoldenFile(GoldenDir(GetParam()), "golden.json"), false);
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Models, GoldenTest, testing::Values("llama-tiny", "qwen3-tiny", "qwen35-tiny"));

// The quantized golden exists for the hybrid model (the hardest case).
TEST(GoldenQ8Test, Qwen35Q8_0MatchesTransformersOnDequantizedWeights) {
  const std::string dir = GoldenDir("qwen35-tiny");
  CompareModel(dir + "/model-q8_0.gguf", test::GoldenFile(dir, "golden-q8_0.json"), true);
}

}  // namespace
}  // namespace cairn::model
