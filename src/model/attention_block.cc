// Attention layers: plain GQA attention (llama, qwen2 with q/k/v biases, qwen3) and Qwen3.5's gated
// attention (query and output gate interleaved per head in attn_q).
#include <cmath>
#include <vector>

#include "core/profiler.h"
#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/kv_write.h"
#include "kernels/norm.h"
#include "kernels/rope.h"
#include "model/layers.h"

namespace cairn::model {
namespace {

// GGUF `llama` files store q/k rows permuted for adjacent-pair RoPE. Moving
// each head's even elements to the first half and odd ones to the second turns
// that into the NEOX (rotate-half) layout; applied to both q and k it leaves
// every q.k dot product unchanged, so attention needs no other change.
void DeinterleaveHeads(float* x, int64_t n_rows, int n_heads, int head_dim, int64_t row_stride, float* tmp) {
  const int half = head_dim / 2;
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int h = 0; h < n_heads; ++h) {
      float* v = x + r * row_stride + static_cast<int64_t>(h) * head_dim;
      for (int i = 0; i < half; ++i) {
        tmp[i] = v[2 * i];
        tmp[half + i] = v[2 * i + 1];
      }
      std::copy(tmp, tmp + head_dim, v);
    }
  }
}

// y[r][j] += bias[j] for n rows of `width` (optional projection biases).
void AddBias(float* y, int64_t n, int64_t width, const float* bias) {
  if (bias == nullptr) return;
  for (int64_t r = 0; r < n; ++r) {
    float* row = y + r * width;
    for (int64_t j = 0; j < width; ++j) row[j] += bias[j];
  }
}

}  // namespace

void AttentionBlock(const ForwardChunk& c, const LayerWeights& w, int attn_layer, const float* h, float* out) {
  const ModelConfig& cfg = *c.config;
  SequenceState& st = *c.state;
  const int64_t n = c.n;
  const int hd = cfg.head_dim;
  const bool gated = w.kind == LayerKind::kGatedAttention;
  const int64_t q_rows = static_cast<int64_t>(cfg.n_head) * hd * (gated ? 2 : 1);
  const int64_t kv_rows = static_cast<int64_t>(cfg.n_head_kv) * hd;
  const int64_t q_head_stride = gated ? 2 * hd : hd;

  float* q = st.Scratch(kScratchQ, n * q_rows);
  float* k = st.Scratch(kScratchK, n * kv_rows);
  float* v = st.Scratch(kScratchV, n * kv_rows);
  float* attn = st.Scratch(kScratchAttn, n * cfg.n_head * hd);
  ProjectSameInput(c, {{w.attn.wq, q}, {w.attn.wk, k}, {w.attn.wv, v}}, h, n);
  AddBias(q, n, q_rows, w.attn.q_bias);  // qwen2: before RoPE, as the HF Linear(bias=True)
  AddBias(k, n, kv_rows, w.attn.k_bias);
  AddBias(v, n, kv_rows, w.attn.v_bias);

  {
    prof::Scope scope(prof::kNormRopeAct);
    if (cfg.qk_norm) {
      kernels::RmsNormHeads(q, n, cfg.n_head, hd, q_rows, q_head_stride, w.attn.q_norm, cfg.rms_eps);
      kernels::RmsNormHeads(k, n, cfg.n_head_kv, hd, kv_rows, hd, w.attn.k_norm, cfg.rms_eps);
    }
    if (cfg.rope_style == RopeStyle::kNorm) {
      std::vector<float> tmp(static_cast<size_t>(hd));
      DeinterleaveHeads(q, n, cfg.n_head, hd, q_rows, tmp.data());
      DeinterleaveHeads(k, n, cfg.n_head_kv, hd, kv_rows, tmp.data());
    }
    kernels::ApplyRope(*c.rope, q, n, cfg.n_head, q_rows, q_head_stride);
    kernels::ApplyRope(*c.rope, k, n, cfg.n_head_kv, kv_rows, hd);
  }

  // Append this chunk's K/V, then attend over positions [0, p0 + n).
  const KvLayout& layout = st.kv_layout();
  const int B = layout.block_tokens;
  {
    // One scope for the chunk: a scope per token cost more (two thread-CPU
    // clock reads) than the append it timed, when profiling.
    prof::Scope scope(prof::kOther);  // KV append
    for (int64_t i = 0; i < n; ++i) {
      const int64_t pos = c.p0 + i;
      KvBlock& block = st.WritableBlock(pos / B);
      kernels::StoreKvToken(layout.KType(), cfg.n_head_kv, hd, B, k + i * kv_rows, block.Slab(attn_layer, 0),
                            static_cast<int>(pos % B));
      kernels::StoreKvToken(layout.dtype, cfg.n_head_kv, hd, B, v + i * kv_rows, block.Slab(attn_layer, 1),
                            static_cast<int>(pos % B));
    }
  }
  const int64_t n_kv = c.p0 + n;
  const size_t n_blocks = static_cast<size_t>((n_kv + B - 1) / B);
  std::vector<const uint8_t*> k_slabs(n_blocks), v_slabs(n_blocks);
  for (size_t b = 0; b < n_blocks; ++b) {
    k_slabs[b] = st.blocks()[b]->Slab(attn_layer, 0);
    v_slabs[b] = st.blocks()[b]->Slab(attn_layer, 1);
  }
  kernels::KvView kv;
  kv.dtype = layout.dtype;
  kv.k_q8 = layout.k_q8;
  kv.block_tokens = B;
  kv.n_kv_heads = cfg.n_head_kv;
  kv.head_dim = hd;
  kv.k_blocks = k_slabs.data();
  kv.v_blocks = v_slabs.data();
  kv.n_tokens = n_kv;
  kernels::AttentionParams params;
  params.n_heads = cfg.n_head;
  params.n_kv_heads = cfg.n_head_kv;
  params.head_dim = hd;
  params.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  params.q_row_stride = q_rows;
  params.q_head_stride = q_head_stride;
  {
    prof::Scope scope(prof::kAttention);
    kernels::Attention(params, q, n, c.p0, kv, attn, *c.pool);
  }

  if (gated) {
    prof::Scope scope(prof::kNormRopeAct);
    for (int64_t r = 0; r < n; ++r) {
      for (int head = 0; head < cfg.n_head; ++head) {
        const float* gate = q + r * q_rows + head * q_head_stride + hd;
        kernels::MulSigmoid(gate, attn + (r * cfg.n_head + head) * hd, hd);
      }
    }
  }
  Project(c, w.attn.wo, attn, n, out);
  AddBias(out, n, cfg.n_embd, w.attn.o_bias);
}

}  // namespace cairn::model
