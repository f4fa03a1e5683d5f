#include "model/weights.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "gguf/gguf_file.h"
#include "kernels/quant.h"
#include "kernels/row_groups.h"

namespace cairn::model {
namespace {

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}

class Binder {
 public:
  Binder(const gguf::GgufFile& file, std::vector<AlignedBuffer<float>>* arena, const BindOptions& options,
         size_t* bytes)
      : file_(file), arena_(arena), options_(options), bytes_(bytes) {}

  const gguf::TensorInfo* Find(const std::string& name) const { return file_.FindTensor(name); }

  const gguf::TensorInfo& Require(const std::string& name) const {
    const gguf::TensorInfo* t = file_.FindTensor(name);
    if (t == nullptr) Fail("model file is missing tensor '{}'", name);
    return *t;
  }

  // A matrix with ne = {cols, rows}.
  // convertible: whether the matrix may be converted at all (the token
  // embedding is only read row by row, unless it is also the output matrix,
  // and converting it would make the whole table resident).
  MatrixView Matrix(const std::string& name, int64_t rows, int64_t cols, bool convertible = true) {
    const gguf::TensorInfo& t = Require(name);
    const bool shape_ok = (t.shape.size() == 2 && t.shape[0] == cols && t.shape[1] == rows) ||
                          (t.shape.size() == 1 && rows == 1 && t.shape[0] == cols);
    if (!shape_ok) {
      Fail("tensor '{}' has shape {}, expected {{{}, {}}}", name, ShapeString(t.shape), cols, rows);
    }
    if (!kernels::IsSupportedWeightType(t.type)) {
      Fail("tensor '{}' has type {}, which Cairn cannot compute with (supported: f32, f16, bf16, q8_0, q4_0, "
           "q4_1, q5_0, q5_1, iq4_nl, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_xs)", name, GetDTypeInfo(t.type).name);
    }
    MatrixView view = kernels::MakeMatrixView(t.type, t.data, rows, cols);
    if (!convertible || options_.matrix_arena == nullptr) {
      *bytes_ += t.bytes;
      return view;
    }
    AlignedBuffer<uint8_t> narrowed;
    if (ShouldNarrow(t.type, cols)) {
      narrowed = Narrow(view, *options_.narrow_to);
      view = kernels::MakeMatrixView(*options_.narrow_to, narrowed.data(), rows, cols);
      if (file_.mapped()) ReleasePages(t.data, t.data + t.bytes);
    }
    const size_t bytes = view.row_stride_bytes * static_cast<size_t>(rows);
    *bytes_ += bytes;
    if (options_.row_groups && rows % kernels::kGroupRows == 0 && kernels::MatMulPrefersRowGroups(view.type)) {
      return ToRowGroups(view, bytes, /*release_source=*/narrowed.size() == 0);
    }
    if (narrowed.size() != 0) options_.matrix_arena->push_back(std::move(narrowed));
    return view;
  }

  bool ShouldNarrow(DType type, int64_t cols) const {
    if (!options_.narrow_to) return false;
    const DTypeInfo& from = GetDTypeInfo(type);
    const DTypeInfo& to = GetDTypeInfo(*options_.narrow_to);
    // More bits per weight: block_bytes / block_elems compared without division.
    const bool wider = int64_t{from.block_bytes} * to.block_elems > int64_t{to.block_bytes} * from.block_elems;
    return wider && cols % to.block_elems == 0;
  }

  // `natural` re-encoded as `to`, row by row (dequantize to F32, quantize),
  // on every core: a 0.5B draft is ~360M weights.
  AlignedBuffer<uint8_t> Narrow(const MatrixView& natural, DType to) {
    const size_t out_row = RowBytes(to, natural.cols);
    AlignedBuffer<uint8_t> out(out_row * static_cast<size_t>(natural.rows));
    const auto* src = static_cast<const uint8_t*>(natural.data);
    if (!narrow_pool_) narrow_pool_ = std::make_unique<ThreadPool>(ThreadPool::DefaultThreadCount());
    std::vector<std::vector<float>> rows(static_cast<size_t>(narrow_pool_->num_threads()),
                                         std::vector<float>(static_cast<size_t>(natural.cols)));
    narrow_pool_->ParallelFor(natural.rows, 1, [&](int64_t r0, int64_t r1, int thread) {
      float* row = rows[static_cast<size_t>(thread)].data();
      for (int64_t r = r0; r < r1; ++r) {
        kernels::DequantizeRow(natural.type, src + r * natural.row_stride_bytes, natural.cols, row);
        kernels::QuantizeRow(to, row, natural.cols, out.data() + r * out_row);
      }
    });
    return out;
  }

  // A copy of `natural` in the row-group layout. With release_source, the
  // file pages it came from are released (a private read-only mapping
  // re-reads them if ever touched). Converted a few MB at a time, each
  // slice's source pages released before the next, so the peak stays one
  // copy of the weights plus one slice.
  MatrixView ToRowGroups(const MatrixView& natural, size_t bytes, bool release_source) {
    AlignedBuffer<uint8_t>& buf = options_.matrix_arena->emplace_back(bytes);
    const auto* src = static_cast<const uint8_t*>(natural.data);
    const size_t group_bytes = natural.row_stride_bytes * kernels::kGroupRows;
    const int64_t groups = natural.rows / kernels::kGroupRows;
    const int64_t slice = std::max<int64_t>(1, static_cast<int64_t>((size_t{8} << 20) / group_bytes));
    for (int64_t g0 = 0; g0 < groups; g0 += slice) {
      const int64_t g1 = std::min(groups, g0 + slice);
      kernels::ToRowGroups(natural.type, src, natural.row_stride_bytes, natural.cols, g0, g1, buf.data());
      if (release_source && file_.mapped()) ReleasePages(src + g0 * group_bytes, src + g1 * group_bytes);
    }
    MatrixView view = natural;
    view.data = buf.data();
    view.row_groups = true;
    return view;
  }

  // A small tensor of exactly `count` elements, converted to F32.
  const float* Vector(const std::string& name, int64_t count) {
    const gguf::TensorInfo& t = Require(name);
    if (t.elements() != count) {
      Fail("tensor '{}' has shape {} ({} elements), expected {} elements", name, ShapeString(t.shape),
           t.elements(), count);
    }
    if (!kernels::IsSupportedWeightType(t.type)) Fail("tensor '{}' has unsupported type {}", name, GetDTypeInfo(t.type).name);
    *bytes_ += t.bytes;
    AlignedBuffer<float>& buf = arena_->emplace_back(static_cast<size_t>(count));
    const int64_t row = t.shape[0];
    const size_t row_bytes = RowBytes(t.type, row);
    for (int64_t r = 0; r < count / row; ++r) {
      kernels::DequantizeRow(t.type, t.data + r * row_bytes, row, buf.data() + r * row);
    }
    return buf.data();
  }

  const float* OptionalVector(const std::string& name, int64_t count) {
    return Find(name) ? Vector(name, count) : nullptr;
  }

 private:
  // Drops the whole pages inside [begin, end) of the file mapping from the
  // process (MADV_DONTNEED on a private read-only mapping: a later touch
  // re-reads the file, so nothing is lost).
  static void ReleasePages(const uint8_t* begin, const uint8_t* end) {
    const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
    const uintptr_t last = reinterpret_cast<uintptr_t>(end) / page * page;
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  }

  const gguf::GgufFile& file_;
  std::vector<AlignedBuffer<float>>* arena_;
  const BindOptions& options_;
  size_t* bytes_;
  std::unique_ptr<ThreadPool> narrow_pool_;  // made on the first narrowed matrix
};

void BindAttention(Binder& b, const ModelConfig& c, const std::string& p, bool gated, AttentionWeights* w) {
  const int64_t q_rows = static_cast<int64_t>(c.n_head) * c.head_dim * (gated ? 2 : 1);
  const int64_t kv_rows = static_cast<int64_t>(c.n_head_kv) * c.head_dim;
  w->wq = b.Matrix(p + "attn_q.weight", q_rows, c.n_embd);
  w->wk = b.Matrix(p + "attn_k.weight", kv_rows, c.n_embd);
  w->wv = b.Matrix(p + "attn_v.weight", kv_rows, c.n_embd);
  w->wo = b.Matrix(p + "attn_output.weight", c.n_embd, static_cast<int64_t>(c.n_head) * c.head_dim);
  if (c.qk_norm) {
    w->q_norm = b.Vector(p + "attn_q_norm.weight", c.head_dim);
    w->k_norm = b.Vector(p + "attn_k_norm.weight", c.head_dim);
  }
  w->q_bias = b.OptionalVector(p + "attn_q.bias", q_rows);
  w->k_bias = b.OptionalVector(p + "attn_k.bias", kv_rows);
  w->v_bias = b.OptionalVector(p + "attn_v.bias", kv_rows);
  w->o_bias = b.OptionalVector(p + "attn_output.bias", c.n_embd);
}

void BindDeltaNet(Binder& b, const ModelConfig& c, const std::string& p, DeltaNetWeights* w) {
  w->w_qkv = b.Matrix(p + "attn_qkv.weight", c.conv_dim(), c.n_embd);
  w->w_gate = b.Matrix(p + "attn_gate.weight", c.ssm_inner, c.n_embd);
  w->w_beta = b.Matrix(p + "ssm_beta.weight", c.ssm_n_v_heads, c.n_embd);
  w->w_alpha = b.Matrix(p + "ssm_alpha.weight", c.ssm_n_v_heads, c.n_embd);
  w->w_out = b.Matrix(p + "ssm_out.weight", c.n_embd, c.ssm_inner);
  w->conv = b.Vector(p + "ssm_conv1d.weight", static_cast<int64_t>(c.conv_dim()) * c.ssm_conv_kernel);
  w->a = b.Vector(p + "ssm_a", c.ssm_n_v_heads);
  w->dt_bias = b.Vector(p + "ssm_dt.bias", c.ssm_n_v_heads);
  w->norm = b.Vector(p + "ssm_norm.weight", c.ssm_d_state);
}

void BindFfn(Binder& b, const ModelConfig& c, const std::string& p, FfnWeights* w) {
  w->gate = b.Matrix(p + "ffn_gate.weight", c.n_ff, c.n_embd);
  w->up = b.Matrix(p + "ffn_up.weight", c.n_ff, c.n_embd);
  w->down = b.Matrix(p + "ffn_down.weight", c.n_embd, c.n_ff);
}

void BindLayer(Binder& b, const ModelConfig& c, int il, LayerKind kind, LayerWeights* w) {
  const std::string p = fmt::format("blk.{}.", il);
  w->kind = kind;
  w->attn_norm = b.Vector(p + "attn_norm.weight", c.n_embd);
  const bool qwen35 = c.arch == Arch::kQwen35;
  w->ffn_norm = b.Vector(p + (qwen35 ? "post_attention_norm.weight" : "ffn_norm.weight"), c.n_embd);
  if (c.arch == Arch::kGemma3) {
    w->post_attn_norm = b.Vector(p + "post_attention_norm.weight", c.n_embd);
    w->post_ffn_norm = b.Vector(p + "post_ffw_norm.weight", c.n_embd);
  }
  if (kind == LayerKind::kGatedDeltaNet) {
    BindDeltaNet(b, c, p, &w->gdn);
  } else {
    BindAttention(b, c, p, kind == LayerKind::kGatedAttention, &w->attn);
  }
  BindFfn(b, c, p, &w->ffn);
}

}  // namespace

ModelWeights BindWeights(const gguf::GgufFile& file, const ModelConfig& c, std::vector<AlignedBuffer<float>>* arena,
                         const BindOptions& options) {
  ModelWeights w;
  Binder b(file, arena, options, &w.bytes);
  const gguf::TensorInfo& embd = b.Require("token_embd.weight");
  if (embd.shape.size() != 2 || embd.shape[0] != c.n_embd) {
    Fail("tensor 'token_embd.weight' has shape {}, expected {{{}, n_vocab}}", ShapeString(embd.shape), c.n_embd);
  }
  const int64_t n_vocab = embd.shape[1];
  // Kept as the file stores it when a separate output matrix exists: a
  // token's row is all a lookup reads, and converting it would make the
  // whole table resident.
  const bool tied = b.Find("output.weight") == nullptr;
  w.token_embd = b.Matrix("token_embd.weight", n_vocab, c.n_embd, /*convertible=*/tied);
  w.output_norm = b.Vector("output_norm.weight", c.n_embd);
  if (b.Find("output.weight")) {
    w.output = b.Matrix("output.weight", n_vocab, c.n_embd);
  } else {
    w.output = w.token_embd;
  }
  w.output_bias = b.OptionalVector("output.bias", n_vocab);
  w.rope_freq_factors = b.OptionalVector("rope_freqs.weight", c.rope_dims / 2);
  w.layers.resize(c.n_layers);
  for (int il = 0; il < c.n_layers; ++il) BindLayer(b, c, il, c.layer_kinds[il], &w.layers[il]);
  for (int m = 0; m < c.n_nextn; ++m) {
    const int il = c.n_layers + m;
    const std::string p = fmt::format("blk.{}.", il);
    MtpWeights& mtp = w.mtp.emplace_back();
    mtp.eh_proj = b.Matrix(p + "nextn.eh_proj.weight", c.n_embd, 2 * static_cast<int64_t>(c.n_embd));
    mtp.enorm = b.Vector(p + "nextn.enorm.weight", c.n_embd);
    mtp.hnorm = b.Vector(p + "nextn.hnorm.weight", c.n_embd);
    mtp.shared_head_norm = b.OptionalVector(p + "nextn.shared_head_norm.weight", c.n_embd);
    if (mtp.shared_head_norm == nullptr) mtp.shared_head_norm = w.output_norm;
    BindLayer(b, c, il, LayerKind::kGatedAttention, &mtp.layer);
  }
  return w;
}

}  // namespace cairn::model
