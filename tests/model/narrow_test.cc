// Narrowing at load (BindOptions::narrow_to, a draft model's --draft-quant):
// which matrices are re-encoded, to exactly what bytes, and that the narrowed
// model computes the same with and without the row-group layout.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/quant.h"
#include "model/model.h"
#include "model/test_models.h"

namespace cairn::model {
namespace {

std::unique_ptr<Model> LoadTiny(DType file_type, std::optional<DType> narrow_to, bool row_groups) {
  Model::LoadOptions options;
  options.narrow_to = narrow_to;
  options.row_groups = row_groups;
  return Model::Load(test::TinyModelPath("qwen3", file_type), options);
}

// Every matrix a qwen3 layer binds, with its name for messages.
std::vector<std::pair<const char*, const MatrixView*>> LayerMatrices(const LayerWeights& l) {
  return {{"wq", &l.attn.wq},     {"wk", &l.attn.wk},   {"wv", &l.attn.wv}, {"wo", &l.attn.wo},
          {"gate", &l.ffn.gate}, {"up", &l.ffn.up}, {"down", &l.ffn.down}};
}

// Row r of `m` as the file stores it, dequantized.
std::vector<float> Row(const MatrixView& m, int64_t r) {
  std::vector<float> row(static_cast<size_t>(m.cols));
  kernels::DequantizeRow(m.type, static_cast<const uint8_t*>(m.data) + r * m.row_stride_bytes, m.cols, row.data());
  return row;
}

std::vector<float> AllLogits(const Model& m, const std::vector<int32_t>& tokens) {
  ThreadPool pool(2);
  auto state = m.NewState();
  ForwardRequest req;
  req.tokens = tokens;
  req.all_logits = true;
  ForwardResult res;
  m.Forward(*state, req, &res, pool);
  return std::vector<float>(res.logits.data(), res.logits.data() + res.logits.size());
}

TEST(NarrowTest, WiderMatricesBecomeTheQuantizationOfTheirValues) {
  const auto file = LoadTiny(DType::kQ8_0, std::nullopt, /*row_groups=*/false);
  const auto narrow = LoadTiny(DType::kQ8_0, DType::kQ4_0, /*row_groups=*/false);
  ASSERT_EQ(file->weights().layers.size(), narrow->weights().layers.size());
  for (size_t il = 0; il < file->weights().layers.size(); ++il) {
    const auto before = LayerMatrices(file->weights().layers[il]);
    const auto after = LayerMatrices(narrow->weights().layers[il]);
    for (size_t i = 0; i < before.size(); ++i) {
      const MatrixView& b = *before[i].second;
      const MatrixView& a = *after[i].second;
      SCOPED_TRACE(testing::Message() << "layer " << il << " " << before[i].first);
      ASSERT_EQ(b.type, DType::kQ8_0);
      ASSERT_EQ(a.type, DType::kQ4_0);
      ASSERT_FALSE(a.row_groups);
      ASSERT_EQ(a.rows, b.rows);
      ASSERT_EQ(a.row_stride_bytes, RowBytes(DType::kQ4_0, b.cols));
      std::vector<uint8_t> expected(a.row_stride_bytes);
      for (int64_t r = 0; r < b.rows; ++r) {
        const std::vector<float> values = Row(b, r);
        kernels::QuantizeRow(DType::kQ4_0, values.data(), b.cols, expected.data());
        ASSERT_EQ(std::memcmp(expected.data(), static_cast<const uint8_t*>(a.data) + r * a.row_stride_bytes,
                              expected.size()),
                  0)
            << "row " << r;
      }
    }
  }
  // The tied head narrows with the embedding it is; norms stay F32 copies.
  EXPECT_EQ(narrow->weights().output.type, DType::kQ4_0);
  EXPECT_EQ(narrow->weights().output.data, narrow->weights().token_embd.data);
  EXPECT_LT(narrow->weights().bytes, file->weights().bytes);
}

TEST(NarrowTest, NarrowerOrEqualTypesAreKept) {
  // Q4_0 -> Q4_0 and Q4_0 -> Q8_0: nothing is re-encoded, the logits are the file's.
  const auto plain = LoadTiny(DType::kQ4_0, std::nullopt, /*row_groups=*/true);
  const std::vector<int32_t> tokens = {1, 7, 42, 3, 99, 5};
  const std::vector<float> reference = AllLogits(*plain, tokens);
  for (const DType to : {DType::kQ4_0, DType::kQ8_0}) {
    const auto same = LoadTiny(DType::kQ4_0, to, /*row_groups=*/true);
    EXPECT_EQ(same->weights().layers[0].ffn.up.type, DType::kQ4_0);
    EXPECT_EQ(AllLogits(*same, tokens), reference) << GetDTypeInfo(to).name;
  }
}

TEST(NarrowTest, WidthsOffTheTargetBlockAreKept) {
  // The tiny model's widths are not multiples of 256: narrowing F32 to Q4_K
  // must keep every matrix as stored rather than fail or pad.
  const auto file = LoadTiny(DType::kF32, std::nullopt, /*row_groups=*/false);
  ASSERT_NE(file->config().n_embd % 256, 0) << "the tiny preset changed; pick a type whose block it misses";
  const auto kept = LoadTiny(DType::kF32, DType::kQ4_K, /*row_groups=*/false);
  EXPECT_EQ(kept->weights().layers[0].attn.wq.type, DType::kF32);
  EXPECT_EQ(kept->weights().layers[0].ffn.gate.type, DType::kF32);
}

TEST(NarrowTest, RowGroupLayoutComputesTheNarrowedModelExactly) {
  // Narrowing happens before the row-group conversion (when this CPU has a
  // row-group kernel for the narrowed type): both layouts give the same bits.
  const std::vector<int32_t> tokens = {5, 17, 2, 64, 11, 8, 31, 90, 4};
  for (const DType to : {DType::kQ4_0, DType::kIQ4_NL}) {
    const auto natural = LoadTiny(DType::kF32, to, /*row_groups=*/false);
    const auto grouped = LoadTiny(DType::kF32, to, /*row_groups=*/true);
    EXPECT_EQ(natural->weights().layers[0].ffn.up.type, to);
    const std::vector<float> a = AllLogits(*natural, tokens);
    EXPECT_EQ(a, AllLogits(*grouped, tokens)) << GetDTypeInfo(to).name;
    EXPECT_NE(a, AllLogits(*LoadTiny(DType::kF32, std::nullopt, true), tokens)) << "narrowing changed nothing";
  }
}

}  // namespace
}  // namespace cairn::model
