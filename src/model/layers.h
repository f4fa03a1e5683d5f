// Internal building blocks of the forward pass (not part of the public API).
//
// A ForwardChunk is one run of n tokens at absolute positions [p0, p0 + n)
// going through every layer. Activations are row-major [n][width] F32.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gated_delta.h"
#include "kernels/rope.h"
#include "model/config.h"
#include "model/model.h"
#include "model/state.h"
#include "model/weights.h"

namespace cairn::model {

// Scratch buffer slots in SequenceState::Scratch.
enum ScratchSlot : int {
  kScratchX = 0,       // residual stream [n][E]
  kScratchH,           // normed input [n][E]
  kScratchOut,         // block output [n][E]
  kScratchQ,           // attention q (+gate) / GDN qkv [n][...]
  kScratchK,
  kScratchV,
  kScratchAttn,        // attention / GDN core output [n][...]
  kScratchFfnGate,     // [n][n_ff]
  kScratchFfnUp,       // [n][n_ff]
  kScratchZ,           // GDN z gate [n][ssm_inner]
  kScratchGates,       // GDN alpha/beta [n][2 * n_v_heads]
  kScratchConvIn,      // GDN raw conv inputs [n][conv_dim]
  kScratchLogits,      // final normed rows [rows][E]
};

struct ForwardChunk {
  const ModelConfig* config;
  const ModelWeights* weights;
  SequenceState* state;
  ThreadPool* pool;
  int64_t p0 = 0;           // absolute position of the first token
  int64_t n = 0;            // tokens in the chunk
  const kernels::RopeTable* rope = nullptr;  // positions p0..p0+n-1
  VerifyCapture* verify = nullptr;
  // Recurrent checkpoints inside the chunk: after marks[i] tokens of it
  // (0 < marks[i] < n, ascending), recurrent layer r copies its conv window and
  // delta-rule state to mark_states[i] + r * (conv + ssm floats), the layout of
  // SequenceState::recurrent(). The projections still run at the full chunk
  // width; only the (token-sequential) conv and recurrence calls are split,
  // which is bit-exact for any split.
  std::span<const int64_t> marks = {};
  std::span<float* const> mark_states = {};
  const kernels::RopeTable* rope_local = nullptr;  // positions as `rope`, sliding layers' base (gemma3)
};

// attn_layer: index among attention layers (KV slab index in a block).
void AttentionBlock(const ForwardChunk& c, const LayerWeights& w, int attn_layer, const float* h, float* out);
// rec_layer: index among recurrent layers (state slot).
void DeltaNetBlock(const ForwardChunk& c, const LayerWeights& w, int rec_layer, const float* h, float* out);
void FfnBlock(const ForwardChunk& c, const FfnWeights& w, const float* h, float* out);
// One whole gemma3 decoder layer on the residual stream x [n][E] (gemma3.cc);
// kv_index: index among global layers, or among sliding layers for a sliding one.
void Gemma3Layer(const ForwardChunk& c, const LayerWeights& w, int kv_index, float* x, float* h, float* out);

// Points the delta-rule kernel at n tokens of post-conv q|k|v rows ([n][conv_dim])
// and gates g, beta ([n][Hv]). GGUF value heads are in tiled order (value head
// t reads key head t mod Hk); when Hv > Hk, q and k are expanded into
// `expanded` so that value head t reads expanded head t.
void BindDeltaInputs(const ModelConfig& cfg, const float* qkv, int64_t n, const float* g, const float* beta,
                     std::vector<float>* expanded, kernels::GatedDeltaShape* shape, kernels::GatedDeltaInputs* in);

// y[n][rows] = x[n][cols] * W^T (the one-projection case of ProjectSameInput).
void Project(const ForwardChunk& c, const kernels::MatrixView& w, const float* x, int64_t n, float* y);

// Several projections (1 .. kMaxSameInputProjections) of the same x
// ([n][cols]), each y[n][rows of its W]: one parallel section, x quantized
// once (kernels::MatMulSameInput); the same bits as one Project per weight.
// No allocation (decode calls it ~100 times per token).
inline constexpr size_t kMaxSameInputProjections = 4;
struct Projection {
  const kernels::MatrixView& w;
  float* y;
};
void ProjectSameInput(const ForwardChunk& c, std::initializer_list<Projection> projections, const float* x,
                      int64_t n);

}  // namespace cairn::model
