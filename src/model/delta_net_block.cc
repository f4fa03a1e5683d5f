// Qwen3.5 Gated DeltaNet layer (hybrid-architectures.md §1.4, llama-cpp-notes §3.3):
//   qkv = attn_qkv·h, z = attn_gate·h, b = ssm_beta·h, a = ssm_alpha·h
//   qkv -> depthwise causal conv (carried window) -> SiLU -> split q | k | v
//   q, k L2-normalised per head; g = ssm_a·softplus(a + dt_bias); beta = sigmoid(b)
//   delta rule per value head (recurrent form: exact for any split)
//   y = RMSNorm(o)·ssm_norm·SiLU(z) per head -> ssm_out
// GGUF value heads are in tiled order: value head t reads key head t mod Hk.
#include <cmath>
#include <cstring>
#include <vector>

#include "core/profiler.h"
#include "kernels/activation.h"
#include "kernels/conv1d.h"
#include "kernels/gated_delta.h"
#include "kernels/norm.h"
#include "model/layers.h"
#include "model/verify_capture.h"

namespace cairn::model {

void DeltaNetBlock(const ForwardChunk& c, const LayerWeights& w, int rec_layer, const float* h, float* out) {
  const ModelConfig& cfg = *c.config;
  SequenceState& st = *c.state;
  const DeltaNetWeights& g = w.gdn;
  const int64_t n = c.n;
  const int hk = cfg.ssm_n_k_heads, hv = cfg.ssm_n_v_heads, d = cfg.ssm_d_state;
  const int64_t conv_dim = cfg.conv_dim();
  const int64_t key_dim = cfg.key_dim();
  const int64_t inner = cfg.ssm_inner;

  float* conv_in = st.Scratch(kScratchConvIn, n * conv_dim);
  float* qkv = st.Scratch(kScratchQ, n * conv_dim);
  float* z = st.Scratch(kScratchZ, n * inner);
  float* gates = st.Scratch(kScratchGates, n * 4 * hv);  // a | b | g | beta, each [n][hv]
  float* core = st.Scratch(kScratchAttn, n * inner);
  float* a = gates;
  float* b = gates + n * hv;
  float* decay = gates + 2 * n * hv;
  float* beta = gates + 3 * n * hv;

  ProjectSameInput(c, {{g.w_qkv, conv_in}, {g.w_gate, z}, {g.w_beta, b}, {g.w_alpha, a}}, h, n);

  // Verification keeps the raw conv inputs so a rollback can rebuild the window.
  VerifyCapture* verify = c.verify;
  const int64_t verify_offset = verify ? c.p0 - verify->start_tokens : 0;
  if (verify) {
    std::memcpy(verify->conv_inputs[rec_layer].data() + verify_offset * conv_dim, conv_in, n * conv_dim * sizeof(float));
  }

  // Segment i is [begin(i), end(i)): the chunk cut at its checkpoint marks
  // (one segment, the whole chunk, when there are none: decode).
  const size_t segments = c.marks.size() + 1;
  auto seg_begin = [&](size_t i) { return i == 0 ? int64_t{0} : c.marks[i - 1]; };
  auto seg_end = [&](size_t i) { return i < c.marks.size() ? c.marks[i] : n; };
  const size_t layer_floats = st.conv_floats_per_layer() + st.ssm_floats_per_layer();
  {
    prof::Scope scope(prof::kConv);
    for (size_t i = 0; i < segments; ++i) {
      const int64_t s0 = seg_begin(i);
      kernels::CausalConv1d(conv_in + s0 * conv_dim, conv_dim, seg_end(i) - s0, conv_dim, cfg.ssm_conv_kernel, g.conv,
                           st.ConvState(rec_layer), /*apply_silu=*/true, qkv + s0 * conv_dim, conv_dim, *c.pool);
      if (i < c.marks.size()) {
        std::memcpy(c.mark_states[i] + rec_layer * layer_floats, st.ConvState(rec_layer),
                    st.conv_floats_per_layer() * sizeof(float));
      }
    }
  }
  {
    prof::Scope scope(prof::kNormRopeAct);
    kernels::L2NormHeads(qkv, n, hk, d, conv_dim, d, 1e-6f);
    kernels::L2NormHeads(qkv + key_dim, n, hk, d, conv_dim, d, 1e-6f);
    // g = ssm_a * softplus(a + dt_bias) with ssm_a = -exp(A_log) as stored in
    // the GGUF (llama.cpp's formula); beta = sigmoid(b).
    for (int64_t t = 0; t < n; ++t) {
      for (int head = 0; head < hv; ++head) a[t * hv + head] += g.dt_bias[head];
    }
    kernels::Softplus(a, decay, n * hv);
    for (int64_t t = 0; t < n; ++t) {
      for (int head = 0; head < hv; ++head) decay[t * hv + head] *= g.a[head];
    }
    kernels::Sigmoid(b, beta, n * hv);
  }

  kernels::GatedDeltaShape shape;
  kernels::GatedDeltaInputs in;
  std::vector<float> expanded;
  BindDeltaInputs(cfg, qkv, n, decay, beta, &expanded, &shape, &in);
  if (verify) {
    std::memcpy(verify->qkv[rec_layer].data() + verify_offset * conv_dim, qkv, n * conv_dim * sizeof(float));
    float* saved = verify->gates[rec_layer].data() + verify_offset * 2 * hv;
    for (int64_t t = 0; t < n; ++t) {
      std::memcpy(saved + t * 2 * hv, decay + t * hv, hv * sizeof(float));
      std::memcpy(saved + t * 2 * hv + hv, beta + t * hv, hv * sizeof(float));
    }
  }
  {
    prof::Scope scope(prof::kRecurrence);
    for (size_t i = 0; i < segments; ++i) {
      const int64_t s0 = seg_begin(i);
      kernels::GatedDeltaInputs part = in;
      part.q += s0 * in.q_stride;
      part.k += s0 * in.k_stride;
      part.v += s0 * in.v_stride;
      part.g += s0 * hv;
      part.beta += s0 * hv;
      kernels::GatedDeltaRecurrent(shape, part, seg_end(i) - s0, st.SsmState(rec_layer), core + s0 * inner, inner,
                                   *c.pool);
      if (i < c.marks.size()) {
        std::memcpy(c.mark_states[i] + rec_layer * layer_floats + st.conv_floats_per_layer(), st.SsmState(rec_layer),
                    st.ssm_floats_per_layer() * sizeof(float));
      }
    }
  }

  // Gated RMSNorm per (token, value head), then the output projection.
  {
    prof::Scope scope(prof::kNormRopeAct);
    kernels::RmsNormGated(core, z, g.norm, cfg.rms_eps, n * hv, d, core);
  }
  Project(c, g.w_out, core, n, out);
}

void BindDeltaInputs(const ModelConfig& cfg, const float* qkv, int64_t n, const float* g, const float* beta,
                     std::vector<float>* expanded, kernels::GatedDeltaShape* shape, kernels::GatedDeltaInputs* in) {
  const int hk = cfg.ssm_n_k_heads, hv = cfg.ssm_n_v_heads, d = cfg.ssm_d_state;
  const int64_t conv_dim = cfg.conv_dim();
  const int64_t key_dim = cfg.key_dim();
  shape->n_k_heads = hk;
  shape->n_v_heads = hv;
  shape->d_k = d;
  shape->d_v = d;
  shape->q_scale = 1.0f / std::sqrt(static_cast<float>(d));
  if (hv == hk) {
    in->q = qkv;
    in->k = qkv + key_dim;
    in->q_stride = in->k_stride = conv_dim;
  } else {
    expanded->resize(static_cast<size_t>(2 * n * hv * d));
    float* eq = expanded->data();
    float* ek = eq + n * hv * d;
    for (int64_t t = 0; t < n; ++t) {
      for (int head = 0; head < hv; ++head) {
        const float* src = qkv + t * conv_dim + (head % hk) * d;
        std::memcpy(eq + (t * hv + head) * d, src, d * sizeof(float));
        std::memcpy(ek + (t * hv + head) * d, src + key_dim, d * sizeof(float));
      }
    }
    shape->n_k_heads = hv;
    in->q = eq;
    in->k = ek;
    in->q_stride = in->k_stride = static_cast<int64_t>(hv) * d;
  }
  in->v = qkv + 2 * key_dim;
  in->v_stride = conv_dim;
  in->g = g;
  in->beta = beta;
}

}  // namespace cairn::model
