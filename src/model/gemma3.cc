// Gemma 3 (`gemma3`): five sliding-window (local) layers per global one,
// local/global RoPE bases, per-head q/k RMSNorm, post-attention and post-FFN
// RMSNorms, GELU-tanh gated FFN, embedding scaled by sqrt(n_embd). Facts from
// ../shared/reference/real-models.md §3; docs/sliding-window.md for the KV.
//
// One decoder layer, residual stream x [n][E]:
//   h   = RMSNorm(x) * attn_norm
//   q,k,v = Wq h, Wk h, Wv h                 q [n][H*hd], k/v [n][Hkv*hd]
//   q,k = RMSNorm_head(q) * q_norm, RMSNorm_head(k) * k_norm   (before RoPE)
//   q,k = RoPE_neox(q,k; base = local 10000 | global rope.freq_base)
//   a   = softmax(scale * q k^T) v, window-masked on sliding layers
//   x  += RMSNorm(Wo a) * post_attention_norm
//   h2  = RMSNorm(x) * ffn_norm
//   x  += RMSNorm(Wdown (gelu_tanh(Wgate h2) * Wup h2)) * post_ffw_norm
// The GGUF norm weights already hold 1 + w (the converter adds it): plain RMSNorm.
#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "core/profiler.h"
#include "gguf/gguf_file.h"
#include "kernels/attention.h"
#include "kernels/kv_write.h"
#include "kernels/norm.h"
#include "kernels/rope.h"
#include "model/layers.h"

namespace cairn::model {

void ReadGemma3Config(const gguf::GgufFile& file, ModelConfig* c) {
  const std::string p = "gemma3.";
  c->sliding_window = static_cast<int>(file.GetU64(p + "attention.sliding_window", 0));
  c->rope_theta_local = static_cast<float>(file.GetF64(p + "rope.freq_base_swa", 10000.0));
  // q scale: 1/sqrt(head_dim), except the 27B (62 layers): 1/sqrt(n_embd / n_head).
  c->attn_scale = c->n_layers == 62 ? 1.0f / std::sqrt(static_cast<float>(c->n_embd / c->n_head))
                                    : 1.0f / std::sqrt(static_cast<float>(c->head_dim));
  c->embd_scale = std::sqrt(static_cast<float>(c->n_embd));   // f32 sqrtf, as llama.cpp (HF rounds to bf16)
  if (file.Find(p + "final_logit_softcapping") != nullptr) Fail("gemma3: final_logit_softcapping is not supported");
  if (c->sliding_window <= 0) return;   // no SWA: every layer global
  // Layer il is sliding iff il % period < period - 1 (period 6: layers 5, 11, 17
  // global); a per-layer array (true = sliding) is also accepted; period 0 = all sliding.
  std::vector<bool> sliding(static_cast<size_t>(c->n_layers));
  const gguf::Value* pattern = file.Find(p + "attention.sliding_window_pattern");
  if (pattern != nullptr && pattern->is_array()) {
    if (static_cast<int>(pattern->size()) < c->n_layers) Fail("gemma3: sliding_window_pattern has {} entries", pattern->size());
    if (pattern->array_type() == gguf::ValueType::kBool) {
      const std::vector<bool> flags = pattern->AsBools();
      for (int il = 0; il < c->n_layers; ++il) sliding[il] = flags[il];
    } else {
      const std::vector<int64_t> flags = pattern->AsI64s();
      for (int il = 0; il < c->n_layers; ++il) sliding[il] = flags[il] != 0;
    }
  } else {
    const int64_t period = pattern != nullptr ? static_cast<int64_t>(file.GetU64(p + "attention.sliding_window_pattern")) : 6;
    for (int il = 0; il < c->n_layers; ++il) sliding[il] = period == 0 || il % period < period - 1;
  }
  for (int il = 0; il < c->n_layers; ++il) {
    if (sliding[il]) c->layer_kinds[il] = LayerKind::kSlidingAttention;
  }
}

namespace {

// ggml's CPU GELU (GGML_GELU_FP16): x rounded to f16 indexes a 65536-entry
// table of f16(gelu_tanh(x)) computed in f32; x <= -10 gives 0, x >= 10 gives x.
const uint16_t* GeluF16Table() {
  static const std::vector<uint16_t> table = [] {
    std::vector<uint16_t> t(1 << 16);
    for (uint32_t i = 0; i < t.size(); ++i) {
      const float x = F16ToF32(static_cast<uint16_t>(i));
      const float g = 0.5f * x * (1.0f + std::tanh(0.79788456080286535587989211986876f * x * (1.0f + 0.044715f * x * x)));
      t[i] = F32ToF16(g);
    }
    return t;
  }();
  return table.data();
}

// gate[i] = gelu_tanh(gate[i]) * up[i], exactly as llama.cpp's CPU GEGLU.
void GeGlu(float* gate, const float* up, int64_t n) {
  const uint16_t* table = GeluF16Table();
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    if (x <= -10.0f) {
      gate[i] = 0.0f;
    } else if (x >= 10.0f) {
      gate[i] = x * up[i];
    } else {
      gate[i] = F16ToF32(table[F32ToF16(x)]) * up[i];
    }
  }
}

// Attention of one layer; its K/V go to the global table (kv_index among
// global layers) or the sliding table (kv_index among sliding layers).
void Gemma3Attention(const ForwardChunk& c, const LayerWeights& w, int kv_index, const float* h, float* out) {
  const ModelConfig& cfg = *c.config;
  SequenceState& st = *c.state;
  const int64_t n = c.n;
  const int hd = cfg.head_dim;
  const bool sliding = w.kind == LayerKind::kSlidingAttention;
  const int64_t q_rows = static_cast<int64_t>(cfg.n_head) * hd;
  const int64_t kv_rows = static_cast<int64_t>(cfg.n_head_kv) * hd;
  float* q = st.Scratch(kScratchQ, n * q_rows);
  float* k = st.Scratch(kScratchK, n * kv_rows);
  float* v = st.Scratch(kScratchV, n * kv_rows);
  float* attn = st.Scratch(kScratchAttn, n * q_rows);
  ProjectSameInput(c, {{w.attn.wq, q}, {w.attn.wk, k}, {w.attn.wv, v}}, h, n);
  {
    prof::Scope scope(prof::kNormRopeAct);
    kernels::RmsNormHeads(q, n, cfg.n_head, hd, q_rows, hd, w.attn.q_norm, cfg.rms_eps);
    kernels::RmsNormHeads(k, n, cfg.n_head_kv, hd, kv_rows, hd, w.attn.k_norm, cfg.rms_eps);
    const kernels::RopeTable& rope = sliding ? *c.rope_local : *c.rope;
    kernels::ApplyRope(rope, q, n, cfg.n_head, q_rows, hd);
    kernels::ApplyRope(rope, k, n, cfg.n_head_kv, kv_rows, hd);
  }
  const KvLayout& layout = sliding ? st.swa_layout() : st.kv_layout();
  const int B = layout.block_tokens;
  {
    // One scope for the chunk: a scope per token cost more (two thread-CPU
    // clock reads) than the append it timed, when profiling.
    prof::Scope scope(prof::kOther);  // KV append
    for (int64_t i = 0; i < n; ++i) {
      const int64_t pos = c.p0 + i;
      KvBlock& block = sliding ? st.WritableSwaBlock(pos / B) : st.WritableBlock(pos / B);
      kernels::StoreKvToken(layout.KType(), cfg.n_head_kv, hd, B, k + i * kv_rows, block.Slab(kv_index, 0),
                            static_cast<int>(pos % B));
      kernels::StoreKvToken(layout.dtype, cfg.n_head_kv, hd, B, v + i * kv_rows, block.Slab(kv_index, 1),
                            static_cast<int>(pos % B));
    }
  }
  // Block pointers; freed sliding blocks (wholly left of every row's window)
  // stay null: the kernel never reads them.
  const int64_t n_kv = c.p0 + n;
  const size_t n_blocks = static_cast<size_t>((n_kv + B - 1) / B);
  const KvBlockTable& table = sliding ? st.swa_blocks() : st.blocks();
  std::vector<const uint8_t*> k_slabs(n_blocks, nullptr), v_slabs(n_blocks, nullptr);
  for (size_t b = 0; b < n_blocks; ++b) {
    if (!table[b]) continue;
    k_slabs[b] = table[b]->Slab(kv_index, 0);
    v_slabs[b] = table[b]->Slab(kv_index, 1);
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
  params.scale = cfg.attn_scale > 0 ? cfg.attn_scale : 1.0f / std::sqrt(static_cast<float>(hd));
  params.window = sliding ? cfg.sliding_window : 0;
  {
    prof::Scope scope(prof::kAttention);
    kernels::Attention(params, q, n, c.p0, kv, attn, *c.pool);
  }
  Project(c, w.attn.wo, attn, n, out);
}

void Gemma3Ffn(const ForwardChunk& c, const FfnWeights& w, const float* h, float* out) {
  const int64_t n = c.n;
  const int64_t ff = c.config->n_ff;
  float* gate = c.state->Scratch(kScratchFfnGate, n * ff);
  float* up = c.state->Scratch(kScratchFfnUp, n * ff);
  ProjectSameInput(c, {{w.gate, gate}, {w.up, up}}, h, n);
  {
    prof::Scope scope(prof::kNormRopeAct);
    GeGlu(gate, up, n * ff);
  }
  Project(c, w.down, gate, n, out);
}

// x += RMSNorm(out) * w, row by row ([n][E]); `tmp` [n][E] scratch.
void AddPostNormed(const ForwardChunk& c, const float* out, const float* w, float* tmp, float* x) {
  const int64_t E = c.config->n_embd;
  {
    prof::Scope scope(prof::kNormRopeAct);
    kernels::RmsNorm(out, E, w, c.config->rms_eps, c.n, E, tmp, E);
  }
  for (int64_t i = 0; i < c.n * E; ++i) x[i] += tmp[i];
}

}  // namespace

void Gemma3Layer(const ForwardChunk& c, const LayerWeights& w, int kv_index, float* x, float* h, float* out) {
  const ModelConfig& cfg = *c.config;
  const int64_t E = cfg.n_embd;
  {
    prof::Scope scope(prof::kNormRopeAct);
    kernels::RmsNorm(x, E, w.attn_norm, cfg.rms_eps, c.n, E, h, E);
  }
  Gemma3Attention(c, w, kv_index, h, out);
  AddPostNormed(c, out, w.post_attn_norm, h, x);   // h is free again
  {
    prof::Scope scope(prof::kNormRopeAct);
    kernels::RmsNorm(x, E, w.ffn_norm, cfg.rms_eps, c.n, E, h, E);
  }
  Gemma3Ffn(c, w.ffn, h, out);
  AddPostNormed(c, out, w.post_ffn_norm, h, x);
}

}  // namespace cairn::model
